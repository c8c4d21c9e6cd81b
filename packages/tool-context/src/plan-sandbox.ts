import type { PlanPolicy } from './plan-policy';

/**
 * What a program in the kernel sandbox may write of the resources bound with
 * write access:
 * - `'none'`: nothing (a read-only plan); every resource is bound read-only;
 * - `'in-place'`: write-bound resources are writable, writes land in the real tree;
 * - `'overlay'`: write-bound folders are writable through an overlay; the
 *   writes land in its upper layer and become changes, recorded with undo
 *   data, once the program has exited (a checkpoint plan).
 */
export type SandboxWrites = 'none' | 'in-place' | 'overlay';

/** How a tool runs its programs in the sandbox: see {@link sandboxWritesForPlan}. */
export interface SandboxWritesOptions {
  /** The tool turns an overlay's changes into recorded, undoable ones (the built-in command does; skill scripts do not). */
  readonly overlay?: boolean;
}

/**
 * The one place where a plan's policy decides what its sandboxed programs may
 * write — the sandbox builds its launch from it (`sandboxOptionsForPlan` of
 * `@ca/sandbox`), and the runtime the capability of a sandboxed tool in the
 * plan (`capabilityInPlan` of `@ca/tool-lifecycle`), so the kernel and the
 * policy step, approval and wrappers agree:
 * - a read-only plan: nothing (`'none'`);
 * - a plan that requires checkpoints: an overlay for a tool that records its
 *   changes (`overlay: true`), else nothing — a program's writes never escape
 *   the checkpoint;
 * - any other plan: the write-bound resources, in place.
 */
export function sandboxWritesForPlan(policy: Pick<PlanPolicy, 'readOnly' | 'requireCheckpoint'>, options: SandboxWritesOptions = {}): SandboxWrites {
  if (policy.readOnly) return 'none';
  if (policy.requireCheckpoint) return options.overlay === true ? 'overlay' : 'none';
  return 'in-place';
}

/** Whether a plan lets its programs reach the network: `policy.network`, the plan's one network switch (absent counts as `'allow'`). */
export function planAllowsNetwork(policy: Pick<PlanPolicy, 'network'>): boolean {
  return policy.network !== 'deny';
}
