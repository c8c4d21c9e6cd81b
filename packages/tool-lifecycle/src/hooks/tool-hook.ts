import type { BoundResource, Change, PlanPolicy, ToolHookStage } from '@ca/tool-context';
import type { InjectionToken } from 'tsyringe';
import type { ToolContent, ToolDescriptor } from '../tool';

/**
 * What a hook sees of the call it runs around: read-only. It can read the
 * plan's policy, resources, metadata and changes, and the tool's descriptor;
 * it cannot record changes or traces, nor make views of the plan.
 */
export interface ToolHookContext {
  readonly planId: string;
  readonly executionId: string;
  readonly toolName: string;
  /** The tool's descriptor (frozen). */
  readonly tool: ToolDescriptor;
  readonly stage: ToolHookStage;
  /** The plan's policy (frozen). */
  readonly policy: PlanPolicy;
  /** What the plan may touch (frozen). */
  readonly resources: readonly BoundResource[];
  /** Free-form data about the plan (frozen). */
  readonly metadata: Readonly<Record<string, unknown>>;
  /** The plan's changes so far: a live, read-only view. */
  readonly changes: readonly Change[];
  /**
   * Aborted when the hook's deadline passes or the plan is cancelled: pass it
   * to what the hook waits for (a request, a child process). Made on first read.
   */
  readonly signal: AbortSignal;
}

/** What a hook before the call decides. Returning nothing is `continue`. */
export type ToolBeforeDecision =
  /** Let the call go on; with `note`, a note for the model on the result. */
  | { readonly decision: 'continue'; readonly note?: string }
  /** Call the tool with `input` instead; it is validated against the tool's input schema again. */
  | { readonly decision: 'rewrite'; readonly input: unknown; readonly note?: string }
  /** Do not call the tool: `execute` throws `ToolHookRefusedError` with the reason. */
  | { readonly decision: 'refuse'; readonly reason: string };

/** What a hook after a successful call decides. Returning nothing is `continue`. */
export type ToolAfterDecision =
  | { readonly decision: 'continue'; readonly note?: string }
  /**
   * Give `output` instead, and `content` as its content blocks; without
   * `content`, the tool's own blocks are dropped (they may still hold what was
   * replaced) and callers render `output` (JSON as text). `output` is
   * validated against the tool's output schema again.
   */
  | { readonly decision: 'replace'; readonly output: unknown; readonly content?: readonly ToolContent[]; readonly note?: string }
  /** As `replace`, for an output with parts taken out: `redactions` counts them by rule, for the trace. */
  | {
      readonly decision: 'redact';
      readonly output: unknown;
      readonly content?: readonly ToolContent[];
      readonly redactions: Readonly<Record<string, number>>;
      readonly note?: string;
    }
  /** Give no output: the result fails with `ToolHookRefusedError` (stage `after`) and the reason. */
  | { readonly decision: 'withhold'; readonly reason: string };

/** What a hook on a failed call decides: nothing, or a note for the model. */
export type ToolErrorDecision = { readonly decision: 'continue'; readonly note?: string };

/** What a hook after a successful call is given. */
export interface ToolAfterCall {
  /** The input the tool was called with (after any rewrite). */
  readonly input: unknown;
  readonly output: unknown;
  readonly content?: readonly ToolContent[];
}

/** What a hook on a failed call is given. */
export interface ToolFailedCall {
  /** The input of the call (after any rewrite). */
  readonly input: unknown;
  /** Why it failed (a coded error). */
  readonly error: Error & { readonly code?: string };
  /** Whatever output the tool gave with its failure. */
  readonly output?: unknown;
}

/**
 * A check of the service's own around every call of the tools it matches:
 * `before` (after input validation, before approval and the call), `after`
 * (on a successful result, before the caller gets it) and `onError` (on a
 * failed result or a thrown failure of the call). Each may return its
 * decision or a promise of it; returning nothing lets the call go on.
 *
 * A hook that throws, answers something that is not a decision, rewrites the
 * input or replaces the output with one the tool's schema refuses, or whose
 * promise does not settle within `timeoutMs`, **fails closed**: the execution
 * fails with `ToolHookError` (`TOOL_HOOK_FAILED`) naming the hook, the tool
 * and the plan.
 *
 * Hooks are trusted code of the service, run in the runtime's process: treat
 * `input` as read-only (rewrite it with `rewrite`, which is validated again).
 */
export interface ToolHook {
  /** Names the hook in traces and errors: 1–200 characters, unique among the runtime's hooks. */
  readonly name: string;
  /** Tool-name globs (`*`, `?`) of the tools it runs for; default every tool. */
  readonly tools?: string | readonly string[];
  /** How long a hook's promise may take, in ms (default 10,000). A synchronous hook is not timed out. */
  readonly timeoutMs?: number;
  before?(input: unknown, context: ToolHookContext): ToolBeforeDecision | void | Promise<ToolBeforeDecision | void>;
  after?(call: ToolAfterCall, context: ToolHookContext): ToolAfterDecision | void | Promise<ToolAfterDecision | void>;
  onError?(call: ToolFailedCall, context: ToolHookContext): ToolErrorDecision | void | Promise<ToolErrorDecision | void>;
}

/** The hooks of the runtime (multi-registration: register one per hook, in the order they run). */
export const TOOL_HOOK: InjectionToken<ToolHook> = Symbol.for('ca.tool-lifecycle.ToolHook');
