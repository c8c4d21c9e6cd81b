import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { temporaryFolder } from './cli.test-helper';

// Replicas of `agents mcp serve --http --fleet` (the built CLI) for the fleet specs, and the
// plain round-robin proxy of @ca/mcp-server's fixtures (no affinity) they are put behind.

/** The built command. */
export const bin = path.resolve(__dirname, '..', 'dist', 'bin.js');

export const { startRoundRobinProxy } = require(path.resolve(__dirname, '../../mcp-server/src/__fixtures__/round-robin-proxy.js')) as {
  startRoundRobinProxy: (backends: readonly string[]) => Promise<{ url: URL; counts: number[]; close(): Promise<void> }>;
};

/** One replica process: its output so far, its exit, and the URL it serves at once it serves. */
export interface Replica {
  readonly name: string;
  readonly child: ChildProcess;
  readonly exit: Promise<number | null>;
  readonly output: () => string;
  url?: URL;
}

/** Polls `condition` every 50 ms; throws naming `what` (a function: read when it fails) after `timeoutMs`. */
export async function waitFor(condition: () => boolean | Promise<boolean>, what: string | (() => string), timeoutMs = 90_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${typeof what === 'string' ? what : what()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Settings of {@link startReplicas}. */
export interface ReplicaSettings {
  /** The configuration file (`-c`). */
  readonly config: string;
  /** Where the replicas run. */
  readonly cwd: string;
  /** Their environment; each gets a state folder of its own besides (as on its own host). */
  readonly env: NodeJS.ProcessEnv;
  /** Arguments before `mcp serve` (`--verbose`). */
  readonly before?: readonly string[];
  /** Arguments after `--replica-id <name>` (`--profile careful`). */
  readonly after?: readonly string[];
}

/**
 * Starts one replica per name (`--http 127.0.0.1:0 --fleet --replica-id <name>`), each pushed
 * into `into` at once (the spec's cleanup kills what is left), and resolves once each serves.
 */
export async function startReplicas(names: readonly string[], settings: ReplicaSettings, into: Replica[]): Promise<Replica[]> {
  const started: Replica[] = [];
  for (const name of names) {
    const args = [bin, ...(settings.before ?? []), 'mcp', 'serve', '-c', settings.config, '--http', '127.0.0.1:0', '--fleet', '--replica-id', name];
    const child = spawn(process.execPath, [...args, ...(settings.after ?? [])], {
      cwd: settings.cwd,
      env: { ...settings.env, AGENTS_STATE_DIR: temporaryFolder('ca-fleet-state-') },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const replica: Replica = { name, child, exit: new Promise((resolve) => child.on('exit', (code) => resolve(code))), output: () => output };
    into.push(replica);
    started.push(replica);
  }
  for (const replica of started) {
    await waitFor(() => /Serving MCP at (\S+)/.test(replica.output()), `${replica.name} to serve`);
    replica.url = new URL((/Serving MCP at (\S+)/.exec(replica.output()) as RegExpExecArray)[1] as string);
  }
  return started;
}

/** Kills (SIGKILL) every replica of `replicas` still running, and empties the list. */
export function killLeft(replicas: Replica[]): void {
  for (const replica of replicas.splice(0)) if (replica.child.exitCode === null && replica.child.signalCode === null) replica.child.kill('SIGKILL');
}
