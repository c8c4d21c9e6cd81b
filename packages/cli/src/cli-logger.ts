import type { LogFields, RuntimeLogger } from '@ca/tool-lifecycle';

/** Distinct lines remembered to drop repeats; beyond that, lines are printed as they come. */
const REMEMBERED_LINES = 1_000;

/**
 * True for what discovery logs about a source, a server or a tool that
 * cannot be offered: the commands report those themselves — `tools list`
 * lists them, and a command that names such a tool says why it is missing —
 * so, without `--verbose`, they are not printed a second time.
 */
function isDiscoveryReport(fields: LogFields | undefined): boolean {
  if (fields === undefined) return false;
  if (fields['sourceId'] !== undefined) return true;
  return fields['toolName'] !== undefined && fields['server'] !== undefined && fields['planId'] === undefined;
}

/**
 * A runtime logger writing `level: message` lines to the CLI's stderr.
 * Debug and info lines only with `verbose`. A line already printed is not
 * printed again (a server that announces a change of its tools makes the
 * adapter list them, and warn about them, once more).
 */
export function createCliLogger(write: (text: string) => void, verbose: boolean): RuntimeLogger {
  const printed = new Set<string>();
  const entry = (level: string, message: string, fields?: LogFields) => {
    const code = typeof fields?.['code'] === 'string' ? ` [${fields['code']}]` : '';
    const line = `${level}${code}: ${message}\n`;
    if (printed.has(line)) return;
    if (printed.size < REMEMBERED_LINES) printed.add(line);
    write(line);
  };
  return {
    debug: (message, fields) => (verbose ? entry('debug', message, fields) : undefined),
    info: (message, fields) => (verbose ? entry('info', message, fields) : undefined),
    warn: (message, fields) => (verbose || !isDiscoveryReport(fields) ? entry('warning', message, fields) : undefined),
    error: (message, fields) => (verbose || !isDiscoveryReport(fields) ? entry('error', message, fields) : undefined),
  };
}
