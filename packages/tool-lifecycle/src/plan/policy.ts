import type { PlanContext, PlanPolicy } from '@ca/tool-context';
import { ToolAccessDeniedError, ToolCheckpointRequiredError } from '../errors';
import { capabilityInPlan, type ToolDescriptor } from '../tool';

/**
 * What the plan's policy says of a tool, without running anything: the
 * refusal the runtime would raise at step 3, or `undefined` when the tool may
 * run. The one place where policy meets capability — the tool's capability in
 * this plan ({@link capabilityInPlan}); `plan check`-style tools call it to
 * judge a plan before it starts.
 *
 * Rules, in order: a tool that `writes` in a read-only plan; an `openWorld`
 * tool in a plan that denies the network (both `ToolAccessDeniedError`); a
 * tool that is not `checkpointable` in a plan that requires checkpoints
 * (`ToolCheckpointRequiredError`).
 *
 * @throws Never.
 */
export function policyRefusal(
  descriptor: Pick<ToolDescriptor, 'name' | 'capability' | 'sandboxed'>,
  policy: PlanPolicy,
  planId: string,
): ToolAccessDeniedError | ToolCheckpointRequiredError | undefined {
  const toolName = descriptor.name;
  const capability = capabilityInPlan(descriptor, policy);
  if (policy.readOnly && capability.writes) return new ToolAccessDeniedError({ toolName, planId, rule: 'read-only' });
  if (policy.network === 'deny' && capability.openWorld) return new ToolAccessDeniedError({ toolName, planId, rule: 'network' });
  if (policy.requireCheckpoint && !capability.checkpointable) return new ToolCheckpointRequiredError({ toolName, planId });
  return undefined;
}

/**
 * Step 3 of an execution: nothing of the tool has run when this refuses.
 * @throws ToolAccessDeniedError or ToolCheckpointRequiredError, as {@link policyRefusal} says.
 */
export function enforcePolicy(descriptor: ToolDescriptor, ctx: PlanContext): void {
  const refusal = policyRefusal(descriptor, ctx.policy, ctx.planId);
  if (refusal !== undefined) throw refusal;
}
