import { stat } from 'node:fs/promises';
import { basename } from 'node:path';
import { ToolCancelledError } from '@ca/tool-context';
import { toolFailure, toolSuccess, type ToolResult } from '@ca/tool-lifecycle';
import {
  ProcessLaunchError,
  ProcessOptionsError,
  ProcessStartError,
  runProcess,
  type CapturedOutput,
  sandboxOptionsForPlan,
  SandboxOverlayError,
  type OverlayChange,
  type SandboxOverlay,
  type SandboxWrites,
} from '@ca/sandbox';
import { schema, type BuiltinToolSpec, type ToolCall } from '../builtin-tool';
import { fileChange, type BuiltinFileState } from '../undo-store';
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
  /** Pid of the process started (under the sandbox: of bubblewrap, which runs the program). */
  readonly pid: number | null;
  /**
   * How the command ran: `'off'` without the kernel sandbox; under it,
   * `'read-only'` (nothing writable: a read-only plan), `'in-place'` (the
   * write-bound resources writable) or `'overlay'` (a checkpoint plan: the
   * writes were applied after the exit, each recorded with undo data).
   */
  readonly sandbox: CommandSandboxMode;
}

/** See {@link CommandOutput.sandbox}. */
export type CommandSandboxMode = 'off' | 'read-only' | 'in-place' | 'overlay';

const SANDBOX_MODES: Readonly<Record<SandboxWrites, CommandSandboxMode>> = { none: 'read-only', 'in-place': 'in-place', overlay: 'overlay' };

/**
 * Variables a model may not set in a call's `env` unless `command.allowEnv`
 * names them: each makes an allowed program load or run other code — the
 * dynamic loader (`LD_PRELOAD` runs a shared object inside `ls`), the program
 * search path, interpreters' options and module paths, shells' start-up
 * files, and the hooks through which common tools start other programs
 * (`GIT_SSH_COMMAND`, `PAGER`, `LESSOPEN`, npm's `script_shell`). Matched
 * without regard to case, as Windows and npm read them.
 */
const CODE_LOADING_PREFIXES = Object.freeze([
  'LD_',
  'DYLD_',
  'PYTHON',
  'PERL',
  'RUBY',
  'GEM_',
  'BUNDLE_',
  'GIT_',
  'NPM_CONFIG_',
  'BASH_FUNC_',
  'LUA_',
  'MALLOC_',
]);
const CODE_LOADING_NAMES = new Set([
  'PATH',
  'PATHEXT',
  'COMSPEC',
  'LIBPATH',
  'SHLIB_PATH',
  'NODE_OPTIONS',
  'NODE_PATH',
  'NODE_REPL_EXTERNAL_MODULE',
  'BASH_ENV',
  'ENV',
  'IFS',
  'CDPATH',
  'SHELLOPTS',
  'BASHOPTS',
  'PS4',
  'SHELL',
  'ZDOTDIR',
  'GCONV_PATH',
  'GLIBC_TUNABLES',
  'LOCPATH',
  'NLSPATH',
  'HOSTALIASES',
  'RESOLV_HOST_CONF',
  'JAVA_TOOL_OPTIONS',
  '_JAVA_OPTIONS',
  'JDK_JAVA_OPTIONS',
  'CLASSPATH',
  'PHPRC',
  'PHP_INI_SCAN_DIR',
  'TCLLIBPATH',
  'EDITOR',
  'VISUAL',
  'PAGER',
  'MANPAGER',
  'LESSOPEN',
  'LESSCLOSE',
  'SSH_ASKPASS',
  'SUDO_ASKPASS',
  'MAKEFLAGS',
  'MFLAGS',
  'MAKEFILES',
]);

/** True for a variable that changes which code a program loads or runs (see {@link CODE_LOADING_NAMES}). */
export function isCodeLoadingVariable(name: string): boolean {
  const upper = name.toUpperCase();
  return CODE_LOADING_NAMES.has(upper) || CODE_LOADING_PREFIXES.some((prefix) => upper.startsWith(prefix));
}

/** `builtin.command.run`: run a program without a shell, confined to a bound folder, with its whole process tree ended on timeout or cancellation. */
export const commandTool: BuiltinToolSpec = {
  name: 'builtin.command.run',
  description:
    'Run a program with arguments, without a shell: command is the argv array, e.g. ["git", "status", "--short"] (no pipes, redirections, globbing or variable expansion; run ["sh", "-c", "..."] for that if it is allowed). ' +
    'The working directory (cwd) must be a folder inside a resource bound with write access; default the root of the first file resource. ' +
    'The environment holds only a minimal safe set plus env; env may not set variables that change which code runs (PATH, LD_*, NODE_OPTIONS, PYTHON*, GIT_*, …) unless the adapter settings allow them. ' +
    'Returns the exit code and the captured stdout and stderr (capped; a marker says how much was cut). The process and everything it started are killed on timeout or cancellation, and when it exits.',
  // What it can do in a plain plan, sandboxed or not: write the plan's write-bound resources (delete them too), reach the network.
  capability: { writes: true, checkpointable: false, idempotent: false, destructive: true, openWorld: true },
  // Under the kernel sandbox the plan's policy holds whatever the program does: a read-only plan gets a read-only
  // file system, a checkpoint plan an overlay whose changes are recorded with undo data, a plan that denies the
  // network no network. The runtime reads the capability in each plan from that (capabilityInPlan).
  sandboxed: {
    description:
      'Run a program with arguments, without a shell, in a sandbox: command is the argv array, e.g. ["git", "status", "--short"] (no pipes, redirections, globbing or variable expansion; run ["sh", "-c", "..."] for that if it is allowed). ' +
      'The working directory (cwd) must be a folder inside a bound resource; default the root of the first file resource. ' +
      'The program can write only the resources bound with write access, and nothing at all in a read-only plan: other writes fail with "Read-only file system" (EROFS). /tmp is private and empty; the network may be cut off by the plan. ' +
      'In a plan that requires checkpoints, its changes to the files are recorded and can be rolled back. ' +
      'The environment holds only a minimal safe set plus env; env may not set variables that change which code runs (PATH, LD_*, NODE_OPTIONS, PYTHON*, GIT_*, …) unless the adapter settings allow them. ' +
      'Returns the exit code and the captured stdout and stderr (capped; a marker says how much was cut). The process and everything it started, daemons included, end on timeout or cancellation, and when it exits.',
    overlay: true,
  },
  // The undo data of an overlay's changes may hold backups of large files, removed with the plan.
  keepsUndoData: true,
  activate: (_ctx, settings) => settings.command.sandbox.ensureAvailable(),
  inputSchema: schema({
    type: 'object',
    properties: {
      command: { type: 'array', items: { type: 'string' }, minItems: 1, description: 'Program and arguments, e.g. ["npm", "test"].' },
      cwd: { type: 'string', minLength: 1, description: 'Working folder, absolute or relative to the resource.' },
      resource: RESOURCE_PROPERTY,
      env: {
        type: 'object',
        additionalProperties: { type: 'string' },
        description: 'Extra environment variables. Variables that change which code runs (PATH, LD_*, NODE_OPTIONS, PYTHON*, GIT_*, …) are refused.',
      },
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
      sandbox: { enum: ['off', 'read-only', 'in-place', 'overlay'] },
    },
    required: ['exitCode', 'signal', 'stdout', 'stderr', 'stdoutTruncated', 'stderrTruncated', 'timedOut', 'cwd', 'pid', 'sandbox'],
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
    const given = (input['env'] as Record<string, string> | undefined) ?? {};
    const allowed = new Set(settings.allowEnv.map((name) => name.toUpperCase()));
    const refused = Object.keys(given).filter((name) => isCodeLoadingVariable(name) && !allowed.has(name.toUpperCase()));
    if (refused.length > 0) {
      throw call.fail(
        'BUILTIN_COMMAND_ENV_NOT_ALLOWED',
        `refused to run "${program}" with ${refused.map((name) => JSON.stringify(name)).join(', ')} in env: ${refused.length === 1 ? 'this variable changes' : 'these variables change'} which code the program loads or runs, which would defeat the allowed commands. Leave ${refused.length === 1 ? 'it' : 'them'} out, set fixed values in command.env, or list the names in command.allowEnv in the adapter settings.`,
        program,
      );
    }
    const sandboxed = await settings.sandbox.isEnabled();
    // Under the sandbox the kernel decides what the program may write, so any bound folder will do as cwd.
    const guarded = await call.guard({
      path: (input['cwd'] as string | undefined) ?? '.',
      resource: input['resource'] as string | undefined,
      access: sandboxed ? 'read' : 'write',
    });
    if (!(await stat(guarded.path)).isDirectory()) {
      throw call.fail('BUILTIN_WRONG_TYPE', `cannot run in "${guarded.path}": cwd must be a folder.`, guarded.path);
    }
    const requested = typeof input['timeoutMs'] === 'number' ? input['timeoutMs'] : settings.defaultTimeoutMs;
    const timeoutMs = Math.min(requested, settings.maxTimeoutMs);
    call.checkCancelled();
    const launcher = sandboxed
      ? await settings.sandbox.launcher({ ...sandboxOptionsForPlan(call.ctx, { overlay: true }), toolName: call.toolName, planId: call.planId })
      : undefined;

    let result;
    try {
      result = await runProcess({
        command: program,
        args: argv.slice(1) as string[],
        cwd: guarded.path,
        inheritEnv: settings.inheritEnv,
        env: { ...settings.env, ...given },
        ...(typeof input['stdin'] === 'string' ? { stdin: input['stdin'] } : {}),
        signal: call.ctx.cancellationToken.signal,
        timeoutMs,
        killGraceMs: settings.killGraceMs,
        maxStdoutBytes: settings.maxOutputBytes,
        maxStderrBytes: settings.maxOutputBytes,
        ...(launcher === undefined ? {} : { launcher }),
        toolName: call.toolName,
        planId: call.planId,
      });
    } catch (error) {
      if (ProcessStartError.isInstance(error)) {
        const reason = (error.cause as { message?: unknown } | undefined)?.message;
        throw call.fail(
          'BUILTIN_COMMAND_START_FAILED',
          `could not start "${program}": ${typeof reason === 'string' ? reason : error.message}. Check the program name, and that it is on the PATH the command gets (command.inheritEnv, command.env) or given by its absolute path.`,
          program,
          error,
        );
      }
      if (ProcessOptionsError.isInstance(error)) {
        throw call.fail(
          'BUILTIN_INVALID_INPUT',
          `cannot run "${program}": ${error.option} is not something the system can pass on (a NUL character, or "=" in a variable name).`,
          program,
          error,
        );
      }
      if (ProcessLaunchError.isInstance(error)) {
        const reason = (error.cause as { message?: unknown } | undefined)?.message;
        throw call.fail(
          'BUILTIN_COMMAND_SANDBOX_FAILED',
          `could not run "${program}" in the sandbox: ${typeof reason === 'string' ? reason : error.message}`,
          program,
          error,
        );
      }
      throw error;
    }
    const overlay = launcher?.overlay();
    try {
      if (result.cancelled) {
        throw new ToolCancelledError({ reason: call.ctx.cancellationToken.reason ?? 'cancelled', toolName: call.toolName, planId: call.planId });
      }
      let stderr = withTruncationMarker(result.stderr);
      if (overlay !== undefined && overlay.skipped.length > 0) {
        const names = overlay.skipped.map((entry) => entry.path);
        stderr += `${stderr === '' || stderr.endsWith('\n') ? '' : '\n'}[sandbox: not applied, a FIFO, socket or device cannot be carried out: ${names.slice(0, 20).join(', ')}${names.length > 20 ? ', …' : ''}]\n`;
      }
      const output: CommandOutput = {
        exitCode: result.exitCode,
        signal: result.signal,
        stdout: withTruncationMarker(result.stdout),
        stderr,
        stdoutTruncated: result.stdout.truncated,
        stderrTruncated: result.stderr.truncated,
        timedOut: result.timedOut,
        cwd: guarded.path,
        pid: result.pid ?? null,
        sandbox: launcher === undefined ? 'off' : SANDBOX_MODES[launcher.writes],
      };
      if (result.timedOut) {
        return toolFailure(
          call.fail(
            'BUILTIN_COMMAND_TIMED_OUT',
            `stopped "${program}" after ${timeoutMs} ms: it did not finish in time. Raise timeoutMs, or make the command do less.${overlay === undefined && launcher?.writes === 'overlay' ? ' None of its changes were applied.' : ''}`,
            program,
          ),
          { output },
        ) as ToolResult;
      }
      if (overlay !== undefined) {
        // A plan cancelled after the exit gets none of the changes.
        call.checkCancelled();
        try {
          await applyOverlay(overlay, call);
        } catch (error) {
          if (!SandboxOverlayError.isInstance(error)) throw error;
          return toolFailure(
            call.fail(
              'BUILTIN_COMMAND_SANDBOX_FAILED',
              `ran "${program}", but ${error.message.replace(/^Tool '[^']*' in plan '[^']*': /, '')}`,
              error.path ?? program,
              error,
            ),
            {
              output,
            },
          ) as ToolResult;
        }
      }
      return toolSuccess(output);
    } finally {
      await overlay?.discard();
    }
  },
};

/**
 * Applies the changes a command made through the overlay of a checkpoint
 * plan, each recorded on the call with the undo data `rollback` reads: the
 * previous state of a modified or deleted entry is captured (inline, or a
 * backup of a large file) before anything is applied; a created one was absent.
 */
async function applyOverlay(overlay: SandboxOverlay, call: ToolCall): Promise<void> {
  await overlay.apply<BuiltinFileState>({
    capture: (_change, target) => call.undo.capture(call.planId, target.directory, target.name),
    applied: (change, before) => call.changes.push(fileChange(change.kind, change, before ?? { type: 'absent' }, summarise(change))),
  });
}

function summarise(change: OverlayChange): string {
  const entry = change.after ?? change.before;
  const what = entry === undefined ? 'entry' : entry.type === 'directory' ? 'folder' : entry.type === 'symlink' ? 'link' : 'file';
  const verb = change.kind === 'create' ? 'created' : change.kind === 'delete' ? 'deleted' : 'changed';
  return `${verb} ${what} ${change.relativePath} (command, through the sandbox's overlay)`;
}

function isAllowed(program: string, allow: readonly string[]): boolean {
  return allow.some((entry) => (entry.includes('/') || entry.includes('\\') ? entry === program : entry === program || entry === basename(program)));
}

function withTruncationMarker(output: CapturedOutput): string {
  const dropped = output.totalBytes - output.keptBytes;
  return dropped > 0 ? `${output.text}\n[… output truncated: ${dropped} more bytes not shown]` : output.text;
}
