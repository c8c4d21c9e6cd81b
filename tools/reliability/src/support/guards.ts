// Small helpers shared by the suites.
import { getEventListeners } from 'node:events';
import * as v8 from 'node:v8';
import * as vm from 'node:vm';

/**
 * Settles with `promise`, or rejects when it has not settled after `ms` — a
 * hang guard only (generous, so that it never depends on the machine's speed).
 */
export async function withinHangGuard<T>(promise: Promise<T>, what: string, ms = 20_000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`hang: ${what} did not settle within ${ms} ms`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** How a promise settled, without throwing. */
export type Settled<T> = { readonly status: 'fulfilled'; readonly value: T } | { readonly status: 'rejected'; readonly reason: unknown };

/** Awaits a promise and tells how it settled. */
export async function settle<T>(promise: Promise<T>): Promise<Settled<T>> {
  try {
    return { status: 'fulfilled', value: await promise };
  } catch (reason) {
    return { status: 'rejected', reason };
  }
}

/** Counts of `process.getActiveResourcesInfo()` by resource type. */
export function activeResourceCounts(): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const type of process.getActiveResourcesInfo()) counts[type] = (counts[type] ?? 0) + 1;
  return counts;
}

/** Number of `abort` listeners on a signal. */
export function abortListenerCount(signal: AbortSignal): number {
  return getEventListeners(signal, 'abort').length;
}

/** Listener counts of the process object, by event name. */
export function processListenerCounts(): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const name of process.eventNames()) counts[String(name)] = process.listenerCount(name);
  return counts;
}

let gcFunction: (() => void) | undefined;

/**
 * A `gc()` function inside Jest, which cannot pass `--expose-gc` to its
 * workers: the flag is set at run time and the function taken from a fresh
 * context, where V8 installs it.
 */
export function getGc(): () => void {
  if (gcFunction === undefined) {
    v8.setFlagsFromString('--expose_gc');
    gcFunction = vm.runInNewContext('gc') as () => void;
  }
  return gcFunction;
}

/** Heap used after full collections. */
export function heapAfterGc(): number {
  const gc = getGc();
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

/**
 * Heap used after GC once it has settled: what earlier suites of the same
 * Jest worker left behind is released asynchronously, so collect until two
 * readings agree within 1% (at most 20 tries).
 */
export async function settledHeapAfterGc(): Promise<number> {
  let previous = heapAfterGc();
  for (let attempt = 0; attempt < 20; attempt++) {
    await new Promise((resolve) => setTimeout(resolve, 25));
    const current = heapAfterGc();
    if (Math.abs(current - previous) <= previous * 0.01) return current;
    previous = current;
  }
  return previous;
}
