import type { PlanContext } from '@ca/tool-context';
import { ToolAccessDeniedError } from './errors/tool-access-denied-error';
import { ToolCheckpointRequiredError } from './errors/tool-checkpoint-required-error';
import type { ToolDescriptor } from './tool-descriptor';

/**
 * Step 3 of an execution, the one place where the plan's policy meets the
 * tool's capability. Nothing of the tool has run when this refuses.
 * @throws ToolAccessDeniedError for a tool that writes in a read-only plan, and for an `openWorld` tool in a plan that denies the network.
 * @throws ToolCheckpointRequiredError for a tool that is not checkpointable in a plan that requires checkpoints.
 */
export function enforcePolicy(descriptor: ToolDescriptor, ctx: PlanContext): void {
  const { capability, name: toolName } = descriptor;
  const { policy, planId } = ctx;
  if (policy.readOnly && capability.writes) throw new ToolAccessDeniedError({ toolName, planId, rule: 'read-only' });
  if (policy.network === 'deny' && capability.openWorld) throw new ToolAccessDeniedError({ toolName, planId, rule: 'network' });
  if (policy.requireCheckpoint && !capability.checkpointable) throw new ToolCheckpointRequiredError({ toolName, planId });
}
