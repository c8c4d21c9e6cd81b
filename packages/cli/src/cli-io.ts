/** Where the command reads and writes; injectable so tests can run it in-process. */
export interface CliIo {
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
  readonly cwd: string;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** True when stdout is a terminal (progress lines are rewritten in place). */
  readonly interactive: boolean;
  /**
   * Where a person answers questions (an MCP server's elicitation, an OAuth
   * sign-in), when stdin is a terminal; absent otherwise, and such questions
   * are declined.
   */
  readonly terminalInput?: NodeJS.ReadableStream;
}

/** The real process's streams, directory and environment. */
export function processIo(): CliIo {
  return {
    stdout: (text) => void process.stdout.write(text),
    stderr: (text) => void process.stderr.write(text),
    cwd: process.cwd(),
    env: process.env,
    interactive: process.stdout.isTTY === true,
    ...(process.stdin.isTTY === true && process.stderr.isTTY === true ? { terminalInput: process.stdin } : {}),
  };
}
