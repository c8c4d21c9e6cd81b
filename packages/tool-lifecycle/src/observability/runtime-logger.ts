import { safeMessage } from '@ca/domain';

/** Structured fields attached to a log entry. */
export type LogFields = Readonly<Record<string, unknown>>;

/**
 * The only way the runtime and its adapters report anything: inject your own
 * (pino, winston, OpenTelemetry logs) under `RUNTIME_LOGGER`. Library code
 * never writes to stdout.
 */
export interface RuntimeLogger {
  debug(message: string, fields?: LogFields): void;
  info(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  error(message: string, fields?: LogFields): void;
}

/** Level below which {@link createConsoleLogger} stays silent. */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';

const order: Record<LogLevel, number> = { debug: 0, info: 1, warn: 2, error: 3, silent: 4 };

/**
 * The default logger: writes to `console.error` (stderr, never stdout), from
 * `level` up (default `warn`), as `[ca] message {json fields}`. What it
 * writes is redacted and capped (`safeMessage` of `@ca/domain`): the message,
 * and the serialised fields as one text, errors among them reduced to
 * `{ name, message }`.
 */
export function createConsoleLogger(level: LogLevel = 'warn'): RuntimeLogger {
  const threshold = order[level] ?? order.warn;
  const write = (entryLevel: LogLevel, message: string, fields?: LogFields): void => {
    if (order[entryLevel] < threshold) return;
    let suffix = '';
    if (fields !== undefined) {
      try {
        suffix = ` ${safeMessage(JSON.stringify(fields, (_key, value: unknown) => (value instanceof Error ? { name: value.name, message: value.message } : value)))}`;
      } catch {
        suffix = ' [unserialisable fields]';
      }
    }
    console.error(`[ca] ${entryLevel}: ${safeMessage(message)}${suffix}`);
  };
  return {
    debug: (message, fields) => write('debug', message, fields),
    info: (message, fields) => write('info', message, fields),
    warn: (message, fields) => write('warn', message, fields),
    error: (message, fields) => write('error', message, fields),
  };
}

const REDACTING = Symbol.for('ca.tool-lifecycle.RedactingLogger');

/**
 * A logger that passes every entry on to `logger` with its message, and each
 * string field and each error field's message, redacted and capped
 * (`safeMessage` of `@ca/domain`: URL userinfo, secret-looking query values
 * and credentials become `***`; more than 4,096 characters are cut, with the
 * full length noted). Nested objects are passed as they are. The runtime and
 * its lifecycle cache wrap the logger they are given with it, so whatever
 * logger a service injects never receives a secret from a runtime message.
 * Wrapping a wrapped logger returns it unchanged.
 *
 * @throws TypeError when `logger` lacks one of `debug`, `info`, `warn`, `error`.
 */
export function createRedactingLogger(logger: RuntimeLogger): RuntimeLogger {
  if ((logger as { [REDACTING]?: boolean } | undefined)?.[REDACTING] === true) return logger;
  for (const level of ['debug', 'info', 'warn', 'error'] as const) {
    if (typeof logger?.[level] !== 'function') {
      throw new TypeError(`createRedactingLogger expects a RuntimeLogger with debug, info, warn and error methods; ${level} is missing.`);
    }
  }
  const pass = (level: 'debug' | 'info' | 'warn' | 'error') => (message: string, fields?: LogFields) =>
    logger[level](safeMessage(message), fields === undefined ? undefined : redactFields(fields));
  return Object.freeze({
    [REDACTING]: true,
    debug: pass('debug'),
    info: pass('info'),
    warn: pass('warn'),
    error: pass('error'),
  }) as RuntimeLogger;
}

function redactFields(fields: LogFields): LogFields {
  if (typeof fields !== 'object' || fields === null) return fields;
  const redacted: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(fields)) {
    if (typeof value === 'string') redacted[key] = safeMessage(value);
    else if (value instanceof Error) redacted[key] = { name: value.name, message: safeMessage(value.message) };
    else redacted[key] = value;
  }
  return redacted;
}

/** A logger that discards everything. */
export const silentLogger: RuntimeLogger = Object.freeze({
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
});
