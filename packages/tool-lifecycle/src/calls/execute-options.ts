import type { ToolExecutionTraceRepair } from '@ca/tool-context';
import type { ToolProgress } from '../tool';

/** Options of one `execute` call. */
export interface ExecuteOptions {
  /** Deadline of this execution in ms; overrides the descriptor's and the runtime's. */
  readonly timeoutMs?: number;
  /** Receives the progress the tool reports. */
  readonly onProgress?: (progress: ToolProgress) => void;
  /**
   * The caller's id of this call in the plan (a plan file's step id, an
   * agent's tool-call id), 1–1,000 characters, the same in every process
   * that makes the plan. It replaces the ordinal in the call's idempotency
   * key, so the key is the same whenever this step is made again; and the
   * call goes through the plan's journal (`CallJournal`): an outcome already
   * recorded for the same step (same tool, same arguments) — a result or a
   * failure — is returned (or thrown) instead of calling again, the trace
   * saying `replayedFrom`. Required in a plan with a journal of its own.
   */
  readonly step?: string;
  /**
   * Cancels this execution only, not its plan (a client that cancelled one
   * request, as an MCP client's `notifications/cancelled` does): the call is
   * not started when the signal has aborted, and a call in progress is
   * cancelled as the plan's cancellation would cancel it (`ToolCancelledError`
   * with the signal's reason). The waits before the call — activation,
   * approval — follow the plan's token.
   */
  readonly signal?: AbortSignal;
  /**
   * The execution this call is made from, when a tool makes calls of its own
   * in the plan (`@ca/code-mode`'s `code.run`; see `ToolRuntime.callerOf`):
   * kept in the call's trace as `parentExecutionId`.
   */
  readonly parentExecutionId?: string;
  /** The repairs a front door made to the arguments before this call (`@ca/model-tools`), kept in the call's trace. */
  readonly repairs?: readonly ToolExecutionTraceRepair[];
}
