import type { LogFields, RuntimeLogger } from '@ca/tool-lifecycle';

/** Warnings already given in this process, by key; bounded so that a hostile server cannot grow it without end. */
const given = new Set<string>();
const MAX_REMEMBERED = 10_000;

/**
 * Logs `message` at `warn` the first time `key` is seen in this process: a
 * tool that is unavailable stays so at every discovery (each runtime, each
 * `list_changed`), and saying it once is enough.
 *
 * @internal
 */
export function warnOnce(logger: RuntimeLogger, key: string, message: string, fields?: LogFields): void {
  if (given.has(key)) return;
  if (given.size < MAX_REMEMBERED) given.add(key);
  logger.warn(message, fields);
}
