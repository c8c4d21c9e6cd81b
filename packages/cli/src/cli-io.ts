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
  /** The process's own standard streams, for a protocol spoken on them (`agents mcp serve` over stdio); absent in-process. */
  readonly protocolStreams?: { readonly input: NodeJS.ReadableStream; readonly output: NodeJS.WritableStream };
}

/** Streams this module listens to for errors, and those whose reader went away (`agents --help | head -1`). */
const heard = new WeakSet<NodeJS.WriteStream>();
const readerGone = new WeakSet<NodeJS.WriteStream>();

/**
 * A write to one of the process's streams. A reader that went away — `head`
 * exits after its line — makes the write fail with `EPIPE`, as an `error`
 * event that, unheard, would end the command with a stack trace: it is heard,
 * and that stream is written no more (the command goes on and exits with its
 * own code, as `git log | head -1` does). Any other error of the stream is
 * thrown as before.
 */
function writeTo(stream: NodeJS.WriteStream): (text: string) => void {
  if (!heard.has(stream)) {
    heard.add(stream);
    stream.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code !== 'EPIPE') throw error;
      readerGone.add(stream);
    });
  }
  return (text) => {
    if (!readerGone.has(stream) && !stream.destroyed) stream.write(text);
  };
}

/** The real process's streams, directory and environment. */
export function processIo(): CliIo {
  return {
    stdout: writeTo(process.stdout),
    stderr: writeTo(process.stderr),
    cwd: process.cwd(),
    env: process.env,
    interactive: process.stdout.isTTY === true,
    ...(process.stdin.isTTY === true && process.stderr.isTTY === true ? { terminalInput: process.stdin } : {}),
    protocolStreams: { input: process.stdin, output: process.stdout },
  };
}
