import { canonicalJson, digest } from '../approval';
import { ToolInvalidArgumentError } from '../errors';
import type { PlanCallRecords } from './plan-calls';
import { extraOf, type Execution } from '../observability';

/**
 * The call's idempotency key: a hash of the plan, the tool, the canonical
 * arguments and the step — the caller's, or the ordinal of this call among
 * the identical calls (same tool, same arguments) of the plan that read
 * their key. Computed once per execution, so every retry has the same.
 * @throws ToolInvalidArgumentError when the input is not JSON data.
 */
export function idempotencyKeyOf(plans: PlanCallRecords, execution: Execution, input: unknown, step: string | undefined): string {
  const known = execution.extra?.idempotencyKey;
  if (known !== undefined) return known;
  const { toolName, ctx } = execution;
  let canonical: string;
  try {
    canonical = canonicalJson(input === undefined ? null : input);
  } catch (error) {
    throw new ToolInvalidArgumentError({
      argument: 'input',
      expected: 'JSON data, to compute the idempotency key of the call',
      received: input,
      toolName,
      planId: ctx.planId,
      advice: (error as Error).message,
    });
  }
  let which: string;
  if (step !== undefined) {
    which = `step ${JSON.stringify(step)}`;
    // What the call journal records of the arguments: their hash, computed while the canonical form is at hand.
    extraOf(execution).argumentsHash = digest(canonical);
  } else {
    const ordinals = plans.planCalls(ctx).ordinals;
    // Large arguments are counted by their hash, so the plan does not keep them.
    const call = canonical.length <= 1_024 ? `${toolName}\0${canonical}` : `${toolName}\0#${digest(canonical)}`;
    const ordinal = ordinals.get(call) ?? 0;
    ordinals.set(call, ordinal + 1);
    which = `ordinal ${ordinal}`;
  }
  // One line per part; every part but the last is single-line JSON or a word and a number, so no two calls share a text.
  const key = digest(`ca.idempotency/1\n${JSON.stringify(ctx.planId)}\n${JSON.stringify(toolName)}\n${which}\n${canonical}`);
  extraOf(execution).idempotencyKey = key;
  return key;
}
