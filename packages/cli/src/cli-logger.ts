import type { LogFields, RuntimeLogger } from '@ca/tool-lifecycle';

/** A runtime logger writing `level: message` lines to the CLI's stderr. */
export function createCliLogger(write: (text: string) => void, verbose: boolean): RuntimeLogger {
  const entry = (level: string, message: string, fields?: LogFields) => {
    const code = typeof fields?.['code'] === 'string' ? ` [${fields['code']}]` : '';
    write(`${level}${code}: ${message}\n`);
  };
  return {
    debug: (message, fields) => (verbose ? entry('debug', message, fields) : undefined),
    info: (message, fields) => (verbose ? entry('info', message, fields) : undefined),
    warn: (message, fields) => entry('warning', message, fields),
    error: (message, fields) => entry('error', message, fields),
  };
}
