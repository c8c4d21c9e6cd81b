import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CallToolResultSchema, CreateTaskResultSchema, ErrorCode, McpError, type CallToolResult, type Task } from '@modelcontextprotocol/sdk/types.js';

/** Settings of one task-based call. */
export interface TaskCallOptions {
  readonly signal: AbortSignal;
  /** Deadline of each request (create, status, result). */
  readonly callTimeoutMs: number;
  /** Deadline of the whole task; it is cancelled on the server when it passes. */
  readonly maxTotalTimeoutMs: number;
  /** Called with each status the server reports that differs from the last. */
  readonly onStatus?: (task: Task) => void;
}

/** The server cancelled the task itself (its status became `cancelled`). */
export class TaskCancelledByServerError extends Error {
  constructor(readonly statusMessage: string | undefined) {
    super(`the server cancelled the task${statusMessage === undefined ? '' : `: ${statusMessage}`}`);
    this.name = 'TaskCancelledByServerError';
  }
}

const TERMINAL = new Set(['completed', 'failed', 'cancelled']);
const MIN_POLL_MS = 50;
const MAX_POLL_MS = 5_000;
const DEFAULT_POLL_MS = 1_000;

/**
 * Calls a tool as an MCP task: `tools/call` with `task`, then `tasks/get`
 * at the interval the server suggests until the task ends, then
 * `tasks/result`. When the task needs input (`input_required`), `tasks/result`
 * is called at once: the server delivers its questions (elicitation) on it
 * and answers when the task is done. When the caller gives up (cancellation,
 * the total deadline), the task is cancelled on the server (`tasks/cancel`).
 *
 * @throws {McpError} as the SDK does for a failed request; `RequestTimeout`
 *   with `data.maxTotalTimeout` when the task outlives `maxTotalTimeoutMs`.
 * @throws {TaskCancelledByServerError} when the server cancelled the task.
 * @throws The signal's reason when it aborts.
 *
 * @internal
 */
export async function callToolAsTask(
  client: Client,
  params: { readonly name: string; readonly arguments: Record<string, unknown>; readonly _meta?: Record<string, unknown> },
  options: TaskCallOptions,
): Promise<CallToolResult> {
  const { signal, callTimeoutMs, maxTotalTimeoutMs } = options;
  const deadline = Date.now() + maxTotalTimeoutMs;
  const remaining = (): number => deadline - Date.now();
  const requestOptions = (limit = callTimeoutMs) => ({ signal, timeout: Math.max(1, Math.min(limit, remaining())) });
  const created = await client.request(
    { method: 'tools/call', params: { name: params.name, arguments: params.arguments, ...(params._meta === undefined ? {} : { _meta: params._meta }) } },
    CreateTaskResultSchema,
    {
      ...requestOptions(),
      task: { ttl: maxTotalTimeoutMs },
    },
  );
  let task: Task = created.task;
  const taskId = task.taskId;
  let reported = '';
  const report = (current: Task): void => {
    const key = `${current.status}\u0000${current.statusMessage ?? ''}`;
    if (key === reported) return;
    reported = key;
    options.onStatus?.(current);
  };
  report(task);
  try {
    while (!TERMINAL.has(task.status)) {
      if (task.status === 'input_required') {
        // The server delivers its questions on tasks/result and answers once the task ends.
        return await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema, requestOptions(Number.MAX_SAFE_INTEGER));
      }
      await sleep(Math.min(Math.max(task.pollInterval ?? DEFAULT_POLL_MS, MIN_POLL_MS), MAX_POLL_MS, Math.max(remaining(), 0)), signal);
      if (remaining() <= 0) {
        throw McpError.fromError(ErrorCode.RequestTimeout, 'Maximum total timeout exceeded', { maxTotalTimeout: maxTotalTimeoutMs });
      }
      task = await client.experimental.tasks.getTask(taskId, requestOptions());
      report(task);
    }
    if (task.status === 'cancelled') throw new TaskCancelledByServerError(task.statusMessage);
    return await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema, requestOptions());
  } catch (error) {
    if (!TERMINAL.has(task.status)) {
      // Best effort: the caller no longer waits, the server should stop working.
      client.experimental.tasks.cancelTask(taskId, { timeout: callTimeoutMs }).catch(() => undefined);
    }
    throw error;
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
