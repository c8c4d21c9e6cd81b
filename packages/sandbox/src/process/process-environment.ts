import { ProcessOptionsError } from './process-options-error';

/**
 * The variables of this process's environment that every program the runtime
 * starts gets, when they are set: enough to find programs, a home, a locale,
 * a terminal type and a temporary folder. Nothing that could carry a secret
 * (no tokens, no `AWS_*`), and not `SHELL`: programs are started without a
 * shell. Anything else must be passed on purpose.
 */
export const MINIMAL_ENVIRONMENT_VARIABLES: readonly string[] = Object.freeze(
  process.platform === 'win32'
    ? [
        'APPDATA',
        'HOMEDRIVE',
        'HOMEPATH',
        'LOCALAPPDATA',
        'PATH',
        'PATHEXT',
        'PROCESSOR_ARCHITECTURE',
        'PROGRAMFILES',
        'SYSTEMDRIVE',
        'SYSTEMROOT',
        'TEMP',
        'TMP',
        'USERNAME',
        'USERPROFILE',
      ]
    : ['HOME', 'LANG', 'LC_ALL', 'LC_CTYPE', 'LOGNAME', 'PATH', 'TERM', 'TMPDIR', 'TZ', 'USER'],
);

/** Options of {@link buildProcessEnvironment}. */
export interface ProcessEnvironmentOptions {
  /** Names copied from `parent` when set there (default {@link MINIMAL_ENVIRONMENT_VARIABLES}). */
  readonly inherit?: readonly string[];
  /** Variables set on top of the inherited ones; `undefined` removes one. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Where inherited values come from (default `process.env`). */
  readonly parent?: NodeJS.ProcessEnv;
}

/**
 * The whole environment of a program: the `inherit` names taken from the
 * parent's environment, then `env` on top. Never the parent's environment as
 * a whole. An inherited value that looks like an exported shell function
 * (`() {…`) is left out.
 *
 * @throws {ProcessOptionsError} `PROCESS_INVALID_OPTIONS` when a name is empty
 *   or holds `=` or NUL, or a value is not a string or holds NUL (the
 *   operating system could not pass it on as given).
 */
export function buildProcessEnvironment(options: ProcessEnvironmentOptions = {}): Record<string, string> {
  return environmentFrom(options, (option, expected, received) => {
    throw new ProcessOptionsError({ option, expected, received });
  });
}

/** @internal {@link buildProcessEnvironment} with the caller's way to fail (which names the tool and plan). */
export function environmentFrom(
  options: ProcessEnvironmentOptions,
  fail: (option: string, expected: string, received: unknown) => never,
): Record<string, string> {
  const { inherit = MINIMAL_ENVIRONMENT_VARIABLES, env = {}, parent = process.env } = options;
  if (!Array.isArray(inherit)) fail('inheritEnv', 'an array of variable names', inherit);
  if (typeof env !== 'object' || env === null || Array.isArray(env)) fail('env', 'an object of variable names to string values', env);
  // A Map, then fromEntries: a name such as `__proto__` stays a plain variable.
  const environment = new Map<string, string>();
  inherit.forEach((name, index) => {
    if (!isVariableName(name)) fail(`inheritEnv[${index}]`, 'a variable name (not empty, no "=" or NUL)', name);
    const value = parent[name];
    if (value === undefined || value.startsWith('()') || value.includes('\0')) return;
    environment.set(name, value);
  });
  for (const name of Object.keys(env)) {
    if (!isVariableName(name)) fail('env', 'variable names that are not empty and hold no "=" or NUL', name);
    const value = env[name];
    if (value === undefined) environment.delete(name);
    else if (typeof value !== 'string' || value.includes('\0')) fail(`env.${name}`, 'a string without NUL characters (or undefined to remove it)', value);
    else environment.set(name, value);
  }
  return Object.fromEntries(environment);
}

/** True for a name the operating system can pass on: not empty, no `=`, no NUL. */
export function isVariableName(name: unknown): name is string {
  return typeof name === 'string' && name.length > 0 && !name.includes('=') && !name.includes('\0');
}
