import { messageOf } from '@ca/domain';
import { ToolCancelledError, createExecutionId, toTraceError, type PlanContext, type ToolExecutionTrace } from '@ca/tool-context';
import type { Execution } from './execution';
import { ToolExecutionError, ToolRuntimeError } from '../errors';
import type { ExecutionResult, ToolDescriptor, ToolResult } from '../tool';
import type { RuntimeLogger } from './runtime-logger';
import { activeTracer, endToolSpan, startToolSpan } from './telemetry';
import type { TraceClock } from './trace-clock';

/**
 * Where every execution is recorded: its id and start, its OpenTelemetry span
 * when a tracer is registered, and exactly one trace appended to the plan's
 * context, whether the execution returns or throws.
 */
export class ExecutionRecorder {
  constructor(
    private readonly clock: TraceClock,
    private readonly logger: RuntimeLogger,
  ) {}

  /** A new execution of `toolName` in the plan of `ctx`, started now. */
  start(toolName: string, ctx: PlanContext): Execution {
    const startedMono = this.clock.monotonic();
    return {
      toolName,
      ctx,
      executionId: createExecutionId(),
      startedMono,
      startedAt: this.clock.wallTime(startedMono),
      view: undefined,
      span: undefined,
      extra: undefined,
    };
  }

  /** The tool is known: its span starts, when a tracer is registered (one read of the API's registry otherwise). */
  found(execution: Execution, tool: { readonly descriptor: ToolDescriptor }): void {
    const tracer = activeTracer();
    if (tracer !== undefined) {
      execution.span = startToolSpan(tracer, execution.toolName, execution.executionId, tool.descriptor.source, execution.ctx.planId);
    }
  }

  /** A returned outcome: traced, and handed to the caller with its trace. */
  complete(execution: Execution, result: ToolResult, resultSizeBytes: number): ExecutionResult<never> {
    const error = result.ok ? undefined : result.error;
    const trace = this.recordTrace(execution, resultSizeBytes, error);
    if (execution.span !== undefined) endToolSpan(execution.span, error === undefined ? undefined : errorType(error), error?.message);
    const done = withExecution(result, execution.executionId, execution.toolName, trace);
    if (execution.extra?.notes !== undefined) (done as { notes?: unknown }).notes = Object.freeze(execution.extra.notes);
    return done;
  }

  /** A thrown outcome: coded, traced, and carrying its trace. */
  fail(execution: Execution, thrown: unknown): Error & { code?: string } {
    const error = codedError(execution, thrown);
    const trace = this.recordTrace(execution, 0, error);
    if (execution.span !== undefined) endToolSpan(execution.span, errorType(error), error.message);
    Object.defineProperty(error, 'trace', { value: trace, configurable: true, writable: true, enumerable: false });
    const notes = execution.extra?.notes;
    if (notes !== undefined) Object.defineProperty(error, 'notes', { value: Object.freeze(notes), configurable: true, writable: true, enumerable: false });
    return error;
  }

  private recordTrace(execution: Execution, resultSizeBytes: number, error: unknown): ToolExecutionTrace {
    const { ctx, toolName, startedAt } = execution;
    const durationMs = this.clock.monotonic() - execution.startedMono;
    const traceError = error === undefined ? undefined : toTraceError(error);
    // Built without object spread: V8 takes a slow path for spreads here.
    const trace: { -readonly [K in keyof ToolExecutionTrace]: ToolExecutionTrace[K] } = {
      executionId: execution.executionId,
      planId: ctx.planId,
      toolName,
      startedAt: this.clock.iso(startedAt),
      endedAt: this.clock.iso(startedAt + durationMs),
      durationMs,
      resultSizeBytes,
      success: error === undefined,
    };
    if (traceError !== undefined) trace.error = traceError;
    const extra = execution.extra;
    if (extra !== undefined) {
      if (extra.approval !== undefined) trace.approval = extra.approval;
      if (extra.attempts !== undefined) trace.attempts = extra.attempts;
      if (extra.replayedFrom !== undefined) trace.replayedFrom = extra.replayedFrom;
      if (extra.repairs !== undefined) trace.repairs = extra.repairs;
      if (extra.parentExecutionId !== undefined) trace.parentExecutionId = extra.parentExecutionId;
      // The key a tool read could have left the process (an Idempotency-Key header, an MCP call's _meta): the trace says which.
      if (extra.idempotencyKey !== undefined) {
        trace.idempotencyKey = extra.idempotencyKey;
        execution.span?.setAttribute('ca.tool.call.idempotency_key', extra.idempotencyKey);
      }
      if (extra.hooks !== undefined) trace.hooks = Object.freeze(extra.hooks);
    }
    // Frozen, the context records this very object instead of a copy.
    Object.freeze(trace);
    try {
      ctx.recordTrace(trace);
    } catch (recordError) {
      this.logger.error(`Could not record the trace of tool '${toolName}' in plan '${ctx.planId}': ${messageOf(recordError)}`, {
        toolName,
        planId: ctx.planId,
      });
    }
    return trace;
  }
}

/** A thrown failure as the caller gets it: the runtime's coded errors as they are, anything else as `ToolExecutionError`. */
export function codedError(execution: Execution, thrown: unknown): Error & { code?: string } {
  return ToolRuntimeError.isInstance(thrown) || ToolCancelledError.isInstance(thrown)
    ? thrown
    : new ToolExecutionError({ toolName: execution.toolName, planId: execution.ctx.planId, cause: thrown });
}

/**
 * The result handed to the caller: the tool's result plus the execution's
 * identity and trace. Built field by field — `{ ...result, extra }` is
 * several microseconds in V8 on this path, more than the rest of execute.
 */
function withExecution(result: ToolResult, executionId: string, toolName: string, trace: ToolExecutionTrace): ExecutionResult<never> {
  const out: Record<string, unknown> = result.ok
    ? { ok: true, output: result.output, executionId, toolName, trace }
    : { ok: false, error: result.error, executionId, toolName, trace };
  if (!result.ok && result.output !== undefined) out.output = result.output;
  if (result.content !== undefined) out.content = result.content;
  if (result.changes !== undefined) out.changes = result.changes;
  if (result.metadata !== undefined) out.metadata = result.metadata;
  return out as unknown as ExecutionResult<never>;
}

function errorType(error: Error & { code?: unknown }): string {
  return typeof error.code === 'string' ? error.code : error.name;
}
