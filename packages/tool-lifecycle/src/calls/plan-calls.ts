import type { PlanContext } from '@ca/tool-context';
import type { ToolResult } from '../tool';
import type { CallLimiter } from './call-limiter';

/** A result kept for an idempotency key, returned instead of calling again. */
export interface RecordedResult {
  readonly executionId: string;
  readonly result: ToolResult;
  readonly sizeBytes: number;
}

/** How many results a plan keeps for explicit steps; beyond, the oldest is forgotten. */
export const RECORDED_RESULTS_PER_PLAN = 10_000;

/**
 * What the runtime keeps about the calls of one plan beyond its context:
 * idempotency ordinals and recorded results, and the plan's call limiters.
 * Made when a plan first needs one of them and dropped with the plan's
 * context. (The approvals of a plan are the approval step's: see
 * `approval/plan-approvals.ts`.)
 */
export class PlanCalls {
  /** How many times each call (tool and canonical arguments) received its idempotency key. */
  readonly ordinals = new Map<string, number>();
  /** Results of calls made with an explicit step, by idempotency key. */
  readonly results = new Map<string, RecordedResult>();
  /** Calls with an explicit step in flight, by idempotency key. */
  readonly inFlight = new Map<string, Promise<void>>();

  /** The plan's call limiters, by settings entry and tool. */
  readonly limiters = new Map<string, CallLimiter>();

  record(key: string, recorded: RecordedResult): void {
    this.results.set(key, recorded);
    if (this.results.size > RECORDED_RESULTS_PER_PLAN) {
      const oldest = this.results.keys().next().value;
      if (oldest !== undefined) this.results.delete(oldest);
    }
  }
}

/**
 * What the runtime keeps per plan about its calls, by context: made on a
 * plan's first need and dropped with its context (a `WeakMap`), so a plan that
 * never needs it costs nothing.
 */
export class PlanCallRecords {
  private readonly plans = new WeakMap<PlanContext, PlanCalls>();

  /** The plan's records, made on first need. */
  planCalls(ctx: PlanContext): PlanCalls {
    let plan = this.plans.get(ctx);
    if (plan === undefined) {
      plan = new PlanCalls();
      this.plans.set(ctx, plan);
    }
    return plan;
  }
}
