import { spawn, type ChildProcess } from 'node:child_process';
import { stat } from 'node:fs/promises';
import { basename } from 'node:path';
import type { Readable } from 'node:stream';
import { ToolCancelledError } from '@ca/tool-context';
import { PROCESS_GROUPS_SUPPORTED, signalProcessGroup, toolFailure, toolSuccess } from '@ca/tool-lifecycle';
import { schema, type BuiltinToolSpec, type ToolCall } from '../builtin-tool';
import { RESOURCE_PROPERTY } from './common';

/** Output of `builtin.command.run`. */
export interface CommandOutput {
  /** Exit code, or `null` when the process was ended by a signal. */
  readonly exitCode: number | null;
  readonly signal: string | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly stdoutTruncated: boolean;
  readonly stderrTruncated: boolean;
  readonly timedOut: boolean;
  readonly cwd: string;
  readonly pid: number | null;
}

// How long to wait for the output pipes to close once the process group is gone.
const PIPE_CLOSE_GRACE_MS = 1000;

/** `builtin.command.run`: run a program without a shell, confined to a bound folder, with its whole process tree ended on timeout or cancellation. */
export const commandTool: BuiltinToolSpec = {
  name: 'builtin.command.run',
  description:
    'Run a program with arguments, without a shell: command is the argv array, e.g. ["git", "status", "--short"] (no pipes, redirections, globbing or variable expansion; run ["sh", "-c", "..."] for that if it is allowed). ' +
    'The working directory (cwd) must be a folder inside a resource bound with write access; default the root of the first file resource. The environment holds only a minimal safe set plus env. ' +
    'Returns the exit code and the captured stdout and stderr (capped; a marker says how much was cut). The process and everything it started are killed on timeout or cancellation, and when it exits.',
  capability: { writes: true, checkpointable: false, idempotent: false, destructive: true, openWorld: true },
  inputSchema: schema({
    type: 'object',
    properties: {
      command: { type: 'array', items: { type: 'string' }, minItems: 1, description: 'Program and arguments, e.g. ["npm", "test"].' },
      cwd: { type: 'string', minLength: 1, description: 'Working folder, absolute or relative to the resource.' },
      resource: RESOURCE_PROPERTY,
      env: { type: 'object', additionalProperties: { type: 'string' }, description: 'Extra environment variables.' },
      stdin: { type: 'string', description: 'Text written to the standard input, which is then closed.' },
      timeoutMs: { type: 'integer', minimum: 1, description: 'Deadline in ms (capped by the adapter settings).' },
    },
    required: ['command'],
    additionalProperties: false,
  }),
  outputSchema: schema({
    type: 'object',
    properties: {
      exitCode: { type: ['integer', 'null'] },
      signal: { type: ['string', 'null'] },
      stdout: { type: 'string' },
      stderr: { type: 'string' },
      stdoutTruncated: { type: 'boolean' },
      stderrTruncated: { type: 'boolean' },
      timedOut: { type: 'boolean' },
      cwd: { type: 'string' },
      pid: { type: ['integer', 'null'] },
    },
    required: ['exitCode', 'signal', 'stdout', 'stderr', 'stdoutTruncated', 'stderrTruncated', 'timedOut', 'cwd', 'pid'],
    additionalProperties: false,
  }),
  async run(input, call) {
    const argv = input['command'];
    if (!Array.isArray(argv) || argv.length === 0 || !argv.every((item) => typeof item === 'string') || argv[0] === '') {
      throw call.fail('BUILTIN_INVALID_INPUT', 'needs "command" as a non-empty array of strings, e.g. ["ls", "-la"].');
    }
    const settings = call.settings.command;
    const program = argv[0] as string;
    if (settings.allow !== undefined && !isAllowed(program, settings.allow)) {
      throw call.fail(
        'BUILTIN_COMMAND_NOT_ALLOWED',
        `refused to run "${program}": it is not in the allowed commands (${settings.allow.join(', ')}). Use one of them, or add it to command.allow in the adapter settings.`,
        program,
      );
    }
    const guarded = await call.guard({ path: (input['cwd'] as string | undefined) ?? '.', resource: input['resource'] as string | undefined, access: 'write' });
    if (!(await stat(guarded.path)).isDirectory()) {
      throw call.fail('BUILTIN_WRONG_TYPE', `cannot run in "${guarded.path}": cwd must be a folder.`, guarded.path);
    }
    const env = commandEnvironment(settings.inheritEnv, settings.env, input['env'] as Record<string, string> | undefined);
    const requested = typeof input['timeoutMs'] === 'number' ? input['timeoutMs'] : settings.defaultTimeoutMs;
    const timeoutMs = Math.min(requested, settings.maxTimeoutMs);
    call.checkCancelled();
    return runProcess(argv as string[], guarded.path, env, typeof input['stdin'] === 'string' ? input['stdin'] : undefined, timeoutMs, call);
  },
};

function isAllowed(program: string, allow: readonly string[]): boolean {
  return allow.some((entry) => (entry.includes('/') || entry.includes('\\') ? entry === program : entry === program || entry === basename(program)));
}

function commandEnvironment(
  inherit: readonly string[],
  fixed: Readonly<Record<string, string>>,
  given: Record<string, string> | undefined,
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of inherit) {
    const value = process.env[name];
    if (value !== undefined) env[name] = value;
  }
  return { ...env, ...fixed, ...(given ?? {}) };
}

class OutputCollector {
  private readonly parts: Buffer[] = [];
  private kept = 0;
  private dropped = 0;

  constructor(private readonly maxBytes: number) {}

  add(chunk: Buffer): void {
    const room = this.maxBytes - this.kept;
    if (room > 0) {
      const piece = chunk.length <= room ? chunk : chunk.subarray(0, room);
      this.parts.push(piece);
      this.kept += piece.length;
    }
    this.dropped += Math.max(0, chunk.length - Math.max(room, 0));
  }

  get truncated(): boolean {
    return this.dropped > 0;
  }

  text(): string {
    const text = Buffer.concat(this.parts).toString('utf8');
    return this.dropped > 0 ? `${text}\n[… output truncated: ${this.dropped} more bytes not shown]` : text;
  }
}

async function runProcess(
  argv: string[],
  cwd: string,
  env: Record<string, string>,
  stdin: string | undefined,
  timeoutMs: number,
  call: ToolCall,
): Promise<import('@ca/tool-lifecycle').ToolResult> {
  const settings = call.settings.command;
  const token = call.ctx.cancellationToken.child({ timeoutMs, reason: `command timed out after ${timeoutMs} ms` });
  const stdout = new OutputCollector(settings.maxOutputBytes);
  const stderr = new OutputCollector(settings.maxOutputBytes);
  let child: ChildProcess;
  try {
    child = spawn(argv[0], argv.slice(1), {
      cwd,
      env,
      shell: false,
      detached: PROCESS_GROUPS_SUPPORTED,
      windowsHide: true,
      stdio: [stdin === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    });
  } catch (error) {
    token.dispose();
    throw call.fail('BUILTIN_COMMAND_START_FAILED', `could not start "${argv[0]}": ${(error as Error).message}.`, argv[0], error);
  }
  const pid = child.pid;
  let graceTimer: NodeJS.Timeout | undefined;
  let cancelled = false;
  const unsubscribe = token.onCancel(() => {
    cancelled = true;
    signalProcessGroup(child, 'SIGTERM');
    graceTimer = setTimeout(() => signalProcessGroup(child, 'SIGKILL'), settings.killGraceMs);
  });
  child.stdout?.on('data', (chunk: Buffer) => stdout.add(chunk));
  child.stderr?.on('data', (chunk: Buffer) => stderr.add(chunk));
  if (stdin !== undefined && child.stdin !== null) {
    child.stdin.on('error', () => undefined); // the program may exit without reading it
    child.stdin.end(stdin);
  }
  try {
    const outcome = await new Promise<{ code: number | null; signal: NodeJS.Signals | null; error?: Error }>((resolve) => {
      child.once('error', (error) => resolve({ code: null, signal: null, error }));
      child.once('exit', (code, signal) => {
        // Whatever the program left running in its group goes with it.
        signalProcessGroup(child, 'SIGKILL');
        waitForPipes([child.stdout, child.stderr]).then(() => resolve({ code, signal }));
      });
    });
    if (outcome.error !== undefined) {
      // Errors from Node's own realm: no instanceof here.
      const { error } = outcome;
      throw call.fail('BUILTIN_COMMAND_START_FAILED', `could not start "${argv[0]}": ${error.message}. Check the program name and PATH.`, argv[0], error);
    }
    const timedOut = cancelled && !call.ctx.cancellationToken.isCancelled;
    if (cancelled && !timedOut) {
      throw new ToolCancelledError({ reason: call.ctx.cancellationToken.reason ?? 'cancelled', toolName: call.toolName, planId: call.planId });
    }
    const output = {
      exitCode: outcome.code,
      signal: outcome.signal,
      stdout: stdout.text(),
      stderr: stderr.text(),
      stdoutTruncated: stdout.truncated,
      stderrTruncated: stderr.truncated,
      timedOut,
      cwd,
      pid: pid ?? null,
    };
    if (timedOut) {
      return toolFailure(
        call.fail('BUILTIN_COMMAND_TIMED_OUT', `stopped "${argv[0]}" after ${timeoutMs} ms: it did not finish in time. Raise timeoutMs, or make the command do less.`, argv[0]),
        { output },
      );
    }
    return toolSuccess(output);
  } finally {
    unsubscribe();
    if (graceTimer !== undefined) clearTimeout(graceTimer);
    token.dispose();
  }
}

async function waitForPipes(streams: (Readable | null)[]): Promise<void> {
  await Promise.all(
    streams.map(
      (stream) =>
        new Promise<void>((resolve) => {
          if (stream === null || stream.readableEnded || stream.destroyed) return resolve();
          // A process outside the group may still hold the pipe: stop waiting after a grace period.
          const timer = setTimeout(() => {
            stream.destroy();
            resolve();
          }, PIPE_CLOSE_GRACE_MS);
          stream.once('close', () => {
            clearTimeout(timer);
            resolve();
          });
        }),
    ),
  );
}
