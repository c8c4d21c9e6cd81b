import { stat } from 'node:fs/promises';
import { basename } from 'node:path';
import { ToolCancelledError } from '@ca/tool-context';
import { toolFailure, toolSuccess, type ToolResult } from '@ca/tool-lifecycle';
import { ProcessOptionsError, ProcessStartError, runProcess, type CapturedOutput } from '@ca/tool-lifecycle/process';
import { schema, type BuiltinToolSpec } from '../builtin-tool';
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
  capability: { writes: true, checkpointable: false, idempotent: false, destructive: true, openWorld: true },
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
    const guarded = await call.guard({ path: (input['cwd'] as string | undefined) ?? '.', resource: input['resource'] as string | undefined, access: 'write' });
    if (!(await stat(guarded.path)).isDirectory()) {
      throw call.fail('BUILTIN_WRONG_TYPE', `cannot run in "${guarded.path}": cwd must be a folder.`, guarded.path);
    }
    const requested = typeof input['timeoutMs'] === 'number' ? input['timeoutMs'] : settings.defaultTimeoutMs;
    const timeoutMs = Math.min(requested, settings.maxTimeoutMs);
    call.checkCancelled();

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
        throw call.fail('BUILTIN_INVALID_INPUT', `cannot run "${program}": ${error.option} is not something the system can pass on (a NUL character, or "=" in a variable name).`, program, error);
      }
      throw error;
    }
    if (result.cancelled) {
      throw new ToolCancelledError({ reason: call.ctx.cancellationToken.reason ?? 'cancelled', toolName: call.toolName, planId: call.planId });
    }
    const output: CommandOutput = {
      exitCode: result.exitCode,
      signal: result.signal,
      stdout: withTruncationMarker(result.stdout),
      stderr: withTruncationMarker(result.stderr),
      stdoutTruncated: result.stdout.truncated,
      stderrTruncated: result.stderr.truncated,
      timedOut: result.timedOut,
      cwd: guarded.path,
      pid: result.pid ?? null,
    };
    if (result.timedOut) {
      return toolFailure(
        call.fail('BUILTIN_COMMAND_TIMED_OUT', `stopped "${program}" after ${timeoutMs} ms: it did not finish in time. Raise timeoutMs, or make the command do less.`, program),
        { output },
      ) as ToolResult;
    }
    return toolSuccess(output);
  },
};

function isAllowed(program: string, allow: readonly string[]): boolean {
  return allow.some((entry) => (entry.includes('/') || entry.includes('\\') ? entry === program : entry === program || entry === basename(program)));
}

function withTruncationMarker(output: CapturedOutput): string {
  const dropped = output.totalBytes - output.keptBytes;
  return dropped > 0 ? `${output.text}\n[… output truncated: ${dropped} more bytes not shown]` : output.text;
}
