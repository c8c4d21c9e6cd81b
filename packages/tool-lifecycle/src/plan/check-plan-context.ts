import type { PlanContext } from '@ca/tool-context';
import { ToolInvalidArgumentError } from '../errors';

/**
 * Checks that `ctx` is the context of a plan (not a tool's view of one, not
 * something else): what `execute` and `activate` are given by their callers.
 * @throws ToolInvalidArgumentError naming `ctx` and saying where a plan's context comes from.
 */
export function checkPlanContext(ctx: PlanContext, toolName: unknown): void {
  if (
    typeof ctx !== 'object' ||
    ctx === null ||
    typeof ctx.planId !== 'string' ||
    typeof ctx.cancellationToken?.check !== 'function' ||
    typeof ctx.forExecution !== 'function' ||
    typeof ctx.recordTrace !== 'function'
  ) {
    const toolsView = typeof ctx === 'object' && ctx !== null && typeof (ctx as { planId?: unknown }).planId === 'string';
    throw new ToolInvalidArgumentError({
      argument: 'ctx',
      expected: 'the context of a plan',
      received: ctx,
      ...(typeof toolName === 'string' ? { toolName } : {}),
      advice: toolsView
        ? "A tool's view of its plan cannot run other tools: pass the plan's context (from runtime.createPlan() or runtime.runPlan())."
        : 'Create one with runtime.createPlan() or run inside runtime.runPlan().',
    });
  }
}
