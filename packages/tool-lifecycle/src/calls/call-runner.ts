import { messageOf } from '@ca/domain';
import { ToolCancelledError, type CancellationToken, type ChangeInput } from '@ca/tool-context';
import type { RegisteredTool } from '../catalog';
import type { ToolLifecycleCache } from '../plan';
import type { PlanCallRecords } from './plan-calls';
import type { ExecutionRecorder, RuntimeLogger, TraceClock } from '../observability';
import type { ExecutionResult, ToolCallOptions, ToolInstance, ToolResult } from '../tool';
import type { CallAttempts } from './call-attempts';
import type { CallLimiter } from './call-limiter';
import { finishCall } from './call-outcome';
import type { CallSettings } from './call-settings';
import type { ExecuteOptions } from './execute-options';
import type { Execution } from '../observability';
import { idempotencyKeyOf } from './idempotency';
import { callWithSettings } from './retries';

/** The execution each tool's view was made for, while the view lives: what `ToolRuntime.callerOf` answers from. */
export const executionsByView = new WeakMap<object, Execution>();

/**
 * Step 5 of an execution, the call: the tool runs with its own view of the
 * plan and a token that carries its deadline, counted as in flight in its
 * plan until its own promise settles; with the tool's retries and limits
 * when the service set some. Also where a call's changes are recorded
 * (step 7), since a retried or cancelled call's changes are kept too.
 */
export class CallRunner implements CallAttempts {
  /** Limiters of the `runtime` scope, by settings entry and tool. */
  readonly runtimeLimiters = new Map<string, CallLimiter>();

  constructor(
    readonly cache: ToolLifecycleCache,
    readonly logger: RuntimeLogger,
    readonly clock: TraceClock,
    readonly plans: PlanCallRecords,
    private readonly recorder: ExecutionRecorder,
    private readonly settings: CallSettings | undefined,
  ) {}

  /** Step 5, with the tool's retries and limits when it has some. */
  dispatch(execution: Execution, tool: RegisteredTool, instance: ToolInstance, input: unknown, options: ExecuteOptions | undefined): Promise<ToolResult> {
    const callPlan = this.settings?.forTool(execution.toolName);
    return callPlan === undefined
      ? this.call(execution, tool, instance, input, options)
      : callWithSettings(this, execution, tool, instance, input, options, callPlan);
  }

  /** One attempt: the tool runs with its own view of the plan and a token that carries its deadline. */
  call(
    execution: Execution,
    tool: RegisteredTool,
    instance: ToolInstance,
    input: unknown,
    options: ExecuteOptions | undefined,
    onSettled?: () => void,
  ): Promise<ToolResult> {
    const { toolName, ctx, executionId } = execution;
    const planId = ctx.planId;
    const timeoutMs = options?.timeoutMs ?? tool.timeoutMs;
    const planToken = ctx.cancellationToken;
    // Cancelled while activating, validating or waiting for approval: the tool must not start.
    if (onSettled === undefined) {
      if (planToken.isCancelled) planToken.check({ toolName, planId });
      if (options?.signal?.aborted === true) throw new ToolCancelledError({ reason: abortReason(options.signal), toolName, planId });
      this.cache.beginExecution(ctx, toolName);
    } else {
      try {
        planToken.check({ toolName, planId });
        if (options?.signal?.aborted === true) throw new ToolCancelledError({ reason: abortReason(options.signal), toolName, planId });
        this.cache.beginExecution(ctx, toolName);
      } catch (error) {
        onSettled();
        throw error;
      }
    }
    const signal = options?.signal;
    const token =
      timeoutMs === undefined
        ? signal === undefined
          ? planToken
          : planToken.child()
        : planToken.child({ timeoutMs, reason: `timed out after ${timeoutMs} ms` });
    // The caller's signal cancels this call only: its token is a child of the plan's.
    const unlink = signal === undefined ? undefined : linkSignal(token, signal);
    const view = ctx.forExecution({
      executionId,
      toolName,
      cancellationToken: token,
      idempotencyKey: () => idempotencyKeyOf(this.plans, execution, input, options?.step),
    });
    execution.view = view;
    executionsByView.set(view, execution);
    const callOptions: ToolCallOptions | undefined = options?.onProgress === undefined ? undefined : { onProgress: options.onProgress };
    let running: Promise<ToolResult>;
    try {
      running = Promise.resolve(instance.execute(input, view, callOptions));
    } catch (error) {
      running = Promise.reject(error);
    }
    // The plan counts the tool as in flight until its own promise settles,
    // even when the caller has already been answered (cancellation).
    return new Promise<ToolResult>((resolve, reject) => {
      let answered = false;
      const unsubscribe = token.onCancel((reason) => {
        answered = true;
        reject(new ToolCancelledError({ reason, toolName, planId }));
      });
      running.then(
        (result) => {
          unsubscribe();
          unlink?.();
          this.cache.endExecution(planId);
          onSettled?.();
          if (token !== planToken) token.dispose();
          // The caller already got ToolCancelledError, but what the tool did
          // before it stopped still happened: keep its changes for rollback.
          if (answered) this.recordChanges(execution, (result as { changes?: unknown } | null)?.changes);
          resolve(result);
        },
        (error: unknown) => {
          unsubscribe();
          unlink?.();
          this.cache.endExecution(planId);
          onSettled?.();
          const cancelled = token.isCancelled;
          if (token !== planToken) token.dispose();
          reject(
            cancelled && !ToolCancelledError.isInstance(error)
              ? new ToolCancelledError({ reason: token.reason ?? 'cancelled', toolName, planId, cause: error })
              : error,
          );
        },
      );
    });
  }

  /** Steps 6 and 7: the output checked, the changes recorded, the execution traced (see {@link finishCall}). */
  finish(execution: Execution, tool: RegisteredTool, raw: unknown): ExecutionResult<never> {
    return finishCall(this, this.recorder, execution, tool, raw);
  }

  /** Step 7: the tool's changes, through its view, which attributes them to the tool and the execution. */
  recordChanges(execution: Execution, changes: unknown): void {
    if (!Array.isArray(changes) || changes.length === 0 || execution.view === undefined) return;
    for (const change of changes) {
      try {
        execution.view.reportChange(change as ChangeInput);
      } catch (error) {
        const { toolName, ctx, executionId } = execution;
        this.logger.warn(`Tool '${toolName}' in plan '${ctx.planId}' reported an invalid change; it was not recorded: ${messageOf(error)}`, {
          toolName,
          planId: ctx.planId,
          executionId,
        });
      }
    }
  }
}

/** Cancels `token` when `signal` aborts, with the signal's reason; returns a function that removes the listener. */
function linkSignal(token: CancellationToken, signal: AbortSignal): () => void {
  const cancel = (): void => token.cancel(abortReason(signal));
  signal.addEventListener('abort', cancel, { once: true });
  return () => signal.removeEventListener('abort', cancel);
}

/** The text of an abort reason: a string as it is, an error's message, else `cancelled by the caller`. */
function abortReason(signal: AbortSignal): string {
  const reason: unknown = signal.reason;
  if (typeof reason === 'string' && reason.length > 0) return reason;
  if (reason instanceof Error && reason.message.length > 0 && reason.name !== 'AbortError') return reason.message;
  return 'cancelled by the caller';
}
