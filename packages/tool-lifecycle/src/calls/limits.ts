import type { CallAttempts } from './call-attempts';
import { CallLimiter } from './call-limiter';
import type { ToolCallPlan } from './call-settings';
import type { Execution } from '../observability';

/** Takes a turn of every limit of the tool, in order; gives back those taken when one refuses. */
export async function takeTurns(runner: CallAttempts, execution: Execution, callPlan: ToolCallPlan): Promise<() => void> {
  const { ctx, toolName } = execution;
  const taken: (() => void)[] = [];
  const subject = { toolName, planId: ctx.planId, token: ctx.cancellationToken };
  try {
    for (const limit of callPlan.limits) {
      const limiters = limit.scope === 'plan' ? runner.plans.planCalls(ctx).limiters : runner.runtimeLimiters;
      let limiter = limiters.get(limit.key);
      if (limiter === undefined) {
        limiter = new CallLimiter(limit.limits, limit.scope, () => runner.clock.monotonic());
        limiters.set(limit.key, limiter);
      }
      const turn = limiter.acquire(subject, limit.policy);
      taken.push(typeof turn === 'function' ? turn : await turn);
    }
  } catch (error) {
    for (const give of taken) give();
    throw error;
  }
  return () => {
    for (const give of taken) give();
  };
}
