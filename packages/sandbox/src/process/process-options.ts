import { spawn as nodeSpawn } from 'node:child_process';
import { environmentFrom } from './process-environment';
import type { ProcessLauncher } from './process-launcher';
import { ProcessOptionsError } from './process-options-error';
import type { ProcessOptions, ProcessSpawn } from './process-types';

/** Longest delay `setTimeout` honours. */
const MAX_TIMER_MS = 2_147_483_647;

/** Defaults of the options every run shares. */
export const DEFAULT_KILL_GRACE_MS = 2_000;
export const DEFAULT_OUTPUT_DRAIN_MS = 1_000;

/** @internal Options every run shares, checked, with the environment built. */
export interface CheckedProcessOptions {
  readonly command: string;
  readonly args: readonly string[];
  readonly cwd: string | undefined;
  readonly env: Readonly<Record<string, string>>;
  readonly signal: AbortSignal | undefined;
  readonly killGraceMs: number;
  readonly outputDrainMs: number;
  readonly spawn: ProcessSpawn;
  readonly launcher: ProcessLauncher | undefined;
  readonly toolName: string | undefined;
  readonly planId: string | undefined;
}

/** @internal Throws the {@link ProcessOptionsError} of one option. */
export type OptionFailure = (option: string, expected: string, received: unknown) => never;

/** @internal Checks the shared options and builds the environment. */
export function checkProcessOptions(options: ProcessOptions): { checked: CheckedProcessOptions; fail: OptionFailure } {
  if (typeof options !== 'object' || options === null) {
    throw new ProcessOptionsError({ option: 'options', expected: "an object such as { command: 'ls', args: ['-la'] }", received: options });
  }
  const toolName = typeof options.toolName === 'string' ? options.toolName : undefined;
  const planId = typeof options.planId === 'string' ? options.planId : undefined;
  const fail: OptionFailure = (option, expected, received) => {
    throw new ProcessOptionsError({ option, expected, received, ...(toolName === undefined ? {} : { toolName }), ...(planId === undefined ? {} : { planId }) });
  };
  const { command, args = [], cwd, signal, spawn = nodeSpawn as ProcessSpawn, launcher } = options;
  if (!isText(command) || command.length === 0) fail('command', 'a non-empty string without NUL characters', command);
  if (!Array.isArray(args)) fail('args', 'an array of strings', args);
  args.forEach((arg, index) => {
    if (!isText(arg)) fail(`args[${index}]`, 'a string without NUL characters', arg);
  });
  if (cwd !== undefined && (!isText(cwd) || cwd.length === 0)) fail('cwd', 'a non-empty path without NUL characters', cwd);
  if (signal !== undefined && !isAbortSignal(signal)) fail('signal', 'an AbortSignal', signal);
  if (typeof spawn !== 'function') fail('spawn', 'a function like child_process.spawn', spawn);
  if (
    launcher !== undefined &&
    (typeof launcher !== 'object' || launcher === null || typeof launcher.prepare !== 'function' || typeof launcher.name !== 'string')
  ) {
    fail('launcher', 'an object with a name and a prepare(launch, signal) method', launcher);
  }
  const env = environmentFrom(
    { ...(options.inheritEnv === undefined ? {} : { inherit: options.inheritEnv }), ...(options.env === undefined ? {} : { env: options.env }) },
    fail,
  );
  return {
    checked: {
      command,
      args: [...args],
      cwd,
      env,
      signal,
      killGraceMs: checkDelay(options.killGraceMs, 'killGraceMs', DEFAULT_KILL_GRACE_MS, fail),
      outputDrainMs: checkDelay(options.outputDrainMs, 'outputDrainMs', DEFAULT_OUTPUT_DRAIN_MS, fail),
      spawn,
      launcher,
      toolName,
      planId,
    },
    fail,
  };
}

/** @internal A delay in milliseconds: a number from 0 to 2^31 - 1. */
export function checkDelay(value: unknown, option: string, fallback: number, fail: OptionFailure): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !(value >= 0 && value <= MAX_TIMER_MS)) fail(option, `a number of milliseconds from 0 to ${MAX_TIMER_MS}`, value);
  return value as number;
}

/** @internal A byte count: an integer ≥ 0. */
export function checkByteCount(value: unknown, option: string, fallback: number, fail: OptionFailure): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) fail(option, 'an integer number of bytes ≥ 0', value);
  return value as number;
}

function isText(value: unknown): value is string {
  return typeof value === 'string' && !value.includes('\0');
}

function isAbortSignal(value: unknown): value is AbortSignal {
  const candidate = value as Partial<AbortSignal> | null;
  return typeof candidate === 'object' && candidate !== null && typeof candidate.aborted === 'boolean' && typeof candidate.addEventListener === 'function';
}
