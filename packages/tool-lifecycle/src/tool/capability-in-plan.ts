import type { ToolCapability } from '@ca/domain';
import { planAllowsNetwork, sandboxWritesForPlan, type PlanPolicy } from '@ca/tool-context';
import type { ToolDescriptor } from './tool-descriptor';

/** The capabilities of one sandboxed tool in the three kinds of plan, and without the network; made once per descriptor. */
interface SandboxedCapabilities {
  readonly byWrites: Readonly<Record<'none' | 'in-place' | 'overlay', ToolCapability>>;
  readonly offline: Readonly<Record<'none' | 'in-place' | 'overlay', ToolCapability>>;
}

const sandboxedCapabilities = new WeakMap<ToolDescriptor['capability'], SandboxedCapabilities>();

/**
 * What a tool can do in a plan with this policy: the one answer the policy
 * step, approval and wrappers read. For most tools that is their
 * `capability` as declared. For a tool that runs its programs in the kernel
 * sandbox (`descriptor.sandboxed`), the sandbox the plan configures
 * (`sandboxWritesForPlan`, `planAllowsNetwork` of `@ca/tool-context` — the
 * functions the sandbox builds its launch from) decides:
 * - a plain plan: the declared capability — a program writes the plan's
 *   write-bound resources (`writes`, and `destructive` unless declared
 *   otherwise), so approval asks for it, rules and wrappers see a writing tool;
 * - a read-only plan (nothing writable): `writes: false`, `destructive:
 *   false`, `checkpointable: true`;
 * - a checkpoint plan: `checkpointable: true` — writes go through an overlay
 *   whose changes are recorded with undo data (`sandboxed.overlay`), or nothing
 *   is writable (`writes: false`, `destructive: false`);
 * - a plan that denies the network: `openWorld: false` (the program has a
 *   network namespace of its own).
 *
 * Every field is the declared one or looser only where the kernel holds the
 * plan's policy, so a wrapper's stricter capability stays stricter in every
 * plan. Frozen, and the same object for the same descriptor capability and plan kind.
 *
 * @throws Never.
 */
export function capabilityInPlan(descriptor: Pick<ToolDescriptor, 'capability' | 'sandboxed'>, policy: PlanPolicy): ToolCapability {
  const { capability, sandboxed } = descriptor;
  if (sandboxed === undefined) return capability;
  const made = sandboxedCapabilities.get(capability) ?? makeSandboxed(capability);
  const writes = sandboxWritesForPlan(policy, sandboxed);
  return planAllowsNetwork(policy) ? made.byWrites[writes] : made.offline[writes];
}

function makeSandboxed(capability: ToolCapability): SandboxedCapabilities {
  const readOnly = (base: ToolCapability): ToolCapability => Object.freeze({ ...base, writes: false, destructive: false, checkpointable: true });
  const variants = (base: ToolCapability) =>
    Object.freeze({ none: readOnly(base), 'in-place': base, overlay: Object.freeze({ ...base, checkpointable: true }) });
  const made: SandboxedCapabilities = {
    byWrites: variants(capability),
    offline: variants(Object.freeze({ ...capability, openWorld: false })),
  };
  sandboxedCapabilities.set(capability, made);
  return made;
}
