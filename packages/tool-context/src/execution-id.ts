import { randomBytes } from 'node:crypto';

let prefix: string | undefined;
let counter = 0;

/**
 * A new execution id, unique within the process and, with overwhelming
 * probability, across processes: a random per-process prefix (64 bits, made
 * on first use) and a counter, e.g. `exec-5f2c9a0b1d3e4f60-1a`. Cheap enough to
 * call on every execution (no randomness per call).
 *
 * @throws Never.
 */
export function createExecutionId(): string {
  if (prefix === undefined) prefix = `exec-${randomBytes(8).toString('hex')}-`;
  counter += 1;
  return prefix + counter.toString(36);
}
