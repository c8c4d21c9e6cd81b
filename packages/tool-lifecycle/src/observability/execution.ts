import type { PlanContext, ToolExecutionContext, ToolExecutionTraceApproval, ToolExecutionTraceHook, ToolExecutionTraceRepair } from '@ca/tool-context';
import type { Span } from '@opentelemetry/api';
import type { ExecutionNote } from '../tool';

/** One execution in flight: what its steps share, in one place. */
export interface Execution {
  readonly toolName: string;
  readonly ctx: PlanContext;
  readonly executionId: string;
  readonly startedMono: number;
  readonly startedAt: number;
  /** The tool's view of the plan, once the call has started. */
  view: ToolExecutionContext | undefined;
  span: Span | undefined;
  /** What only some executions have (approval, retries, replay, key), made when the first of them is: most executions have none. */
  extra: ExecutionExtra | undefined;
}

/** The less common facts of an execution, for its trace. */
export interface ExecutionExtra {
  /** What the approval step decided, when it decided anything. */
  approval?: ToolExecutionTraceApproval;
  /** How many times the tool was called, once it was retried. */
  attempts?: number;
  /** The execution whose recorded result was returned instead of calling. */
  replayedFrom?: string;
  /** The call's idempotency key, once computed. */
  idempotencyKey?: string;
  /** The caller's step id, for a call made with one (`execute(…, { step })`). */
  step?: string;
  /** SHA-256 of the canonical arguments, for a call made with a step id (what its journal entry holds). */
  argumentsHash?: string;
  /** What each hook decided, in the order they ran (frozen entries). */
  hooks?: ToolExecutionTraceHook[];
  /** The notes hooks added for the model. */
  notes?: ExecutionNote[];
  /** The execution the call was made from (`ExecuteOptions.parentExecutionId`). */
  parentExecutionId?: string;
  /** The repairs a front door made to the call's arguments. */
  repairs?: readonly ToolExecutionTraceRepair[];
}

/** The execution's less common facts, made on first need. */
export function extraOf(execution: Execution): ExecutionExtra {
  return (execution.extra ??= {});
}
