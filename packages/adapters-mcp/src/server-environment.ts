/**
 * Variables of this process's environment that every stdio server gets,
 * when set: enough to find programs, a home, a locale and a temp directory.
 * Not `SHELL` (servers are started without a shell) and nothing that could
 * carry a secret. Everything else must be declared in the server's `env`, or
 * named in its `inheritEnv`.
 */
export const DEFAULT_INHERITED_ENVIRONMENT: readonly string[] = Object.freeze(
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

/**
 * The environment of a stdio server: the {@link DEFAULT_INHERITED_ENVIRONMENT}
 * and the `inheritEnv` names taken from `parent`, then the declared `env` on
 * top. Values that look like exported shell functions (`() {…`) are skipped,
 * as the MCP SDK does.
 *
 * @throws Never.
 */
export function buildServerEnvironment(
  declared: Readonly<Record<string, string>>,
  inherit: readonly string[],
  parent: NodeJS.ProcessEnv = process.env,
): Record<string, string> {
  const environment: Record<string, string> = {};
  for (const name of [...DEFAULT_INHERITED_ENVIRONMENT, ...inherit]) {
    const value = parent[name];
    if (value === undefined || value.startsWith('()')) continue;
    environment[name] = value;
  }
  return Object.assign(environment, declared);
}
