import type { PlanContext } from '@ca/tool-context';
import type { CallJournal, MemoryCallJournal } from '../journal';
import type { CallLimiter } from './call-limiter';

/**
 * What the runtime keeps about the calls of one plan beyond its context:
 * idempotency ordinals, the calls of an explicit step in flight, the plan's
 * journal, and the plan's call limiters. Made when a plan first needs one of
 * them and dropped with the plan's context. (The approvals of a plan are the
 * approval step's: see `approval/plan-approvals.ts`.)
 */
export class PlanCalls {
  /** How many times each call (tool and canonical arguments) received its idempotency key. */
  readonly ordinals = new Map<string, number>();
  /** Calls with an explicit step in flight in this process, by idempotency key. */
  readonly inFlight = new Map<string, Promise<void>>();
  /** The plan's own journal (`createPlan({ journal })`). */
  journal: CallJournal | undefined = undefined;
  /** The journal of a plan without one of its own in a runtime without one: in memory, made on the first call with a step id. */
  memoryJournal: MemoryCallJournal | undefined = undefined;

  /** The plan's call limiters, by settings entry and tool. */
  readonly limiters = new Map<string, CallLimiter>();
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

  /** The plan's records, when it has some. */
  existing(ctx: PlanContext): PlanCalls | undefined {
    return this.plans.get(ctx);
  }
}
