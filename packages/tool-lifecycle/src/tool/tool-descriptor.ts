import type { Tool } from '@ca/domain';

/**
 * How a tool runs its programs in the kernel sandbox, which the plan's policy
 * configures (`sandboxWritesForPlan` of `@ca/tool-context`): nothing is
 * writable in a read-only plan; in a plan that requires checkpoints, writes go
 * through an overlay recorded with undo data when `overlay` is true, else
 * nothing is writable; in any other plan the write-bound resources are
 * writable in place; the network is cut when the plan denies it.
 */
export interface ToolSandboxing {
  /** The tool turns an overlay's changes into recorded, undoable ones (the built-in command does; skill scripts do not). */
  readonly overlay: boolean;
}

/**
 * Lightweight metadata of a tool as a source offers it. Discovery produces
 * descriptors without activating anything or loading heavy content.
 */
export interface ToolDescriptor extends Tool {
  /**
   * Default deadline of one execution, in milliseconds. A runtime-wide
   * default applies when absent; a per-call `timeoutMs` overrides both.
   */
  readonly timeoutMs?: number;
  /**
   * Set by a source whose tool runs its programs in the kernel sandbox. Its
   * `capability` is then what it can do in a plan that is neither read-only
   * nor requires checkpoints (writes the write-bound resources, reaches the
   * network), and `capabilityInPlan` says what it can do in a given plan —
   * the one answer the policy step, approval and wrappers use.
   */
  readonly sandboxed?: ToolSandboxing;
}
