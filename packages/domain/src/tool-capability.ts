/**
 * What a tool may do to the world, as far as plan policy is concerned.
 *
 * `writes` and `checkpointable` are enforced by the runtime (a read-only plan
 * refuses a tool that writes; a checkpoint-required plan refuses a tool that
 * is not checkpointable). The remaining fields are hints, with the meaning of
 * the MCP tool annotations of the same names.
 */
export interface ToolCapability {
  /** The tool changes state outside the plan (files, services, processes). */
  readonly writes: boolean;
  /** Every change the tool makes is recorded with enough data to undo it. */
  readonly checkpointable: boolean;
  /** Calling the tool twice with the same input has no further effect. */
  readonly idempotent: boolean;
  /** A write may destroy data (delete, overwrite) rather than only add. */
  readonly destructive: boolean;
  /** The tool reaches an open world (network, external services). */
  readonly openWorld: boolean;
}

/**
 * A capability as sources and users write it: every field optional, values
 * possibly of the wrong type (they often come from untrusted JSON).
 */
export type ToolCapabilityInput = { readonly [K in keyof ToolCapability]?: unknown };

/**
 * Turns whatever a source declares into a complete {@link ToolCapability}.
 *
 * Missing or unknown values fall on the conservative side, so that a tool
 * which says nothing is treated as the riskiest kind:
 * - `writes`: `true` unless exactly `false`;
 * - `checkpointable`: `true` when exactly `true`, and also when it is not given
 *   and `writes` is exactly `false` — a tool that changes nothing has nothing
 *   to undo, so a checkpoint-required plan may run it; otherwise `false`;
 * - `idempotent`: `false` unless exactly `true`;
 * - `destructive`: `false` for a tool that does not write, otherwise `true`
 *   unless exactly `false`;
 * - `openWorld`: `true` unless exactly `false`.
 *
 * Never throws: anything that is not an object yields the most conservative
 * capability.
 */
export function normalizeCapability(input?: ToolCapabilityInput | null | unknown): ToolCapability {
  const value = (typeof input === 'object' && input !== null ? input : {}) as ToolCapabilityInput;
  const writes = value.writes !== false;
  return Object.freeze({
    writes,
    checkpointable: value.checkpointable === true || (value.checkpointable === undefined && !writes),
    idempotent: value.idempotent === true,
    destructive: writes ? value.destructive !== false : false,
    openWorld: value.openWorld !== false,
  });
}

/**
 * True when `candidate` is at least as strict as `base`: it claims no
 * permission that `base` lacks. Used by wrappers, which may tighten a tool's
 * capability but never loosen it.
 *
 * "Stricter" means: declares `writes` if `base` does, is `checkpointable`
 * only if `base` is, `destructive` if `base` is, `openWorld` if `base` is,
 * and `idempotent` only if `base` is.
 */
export function isCapabilityAtLeastAsStrict(candidate: ToolCapability, base: ToolCapability): boolean {
  return (
    (!base.writes || candidate.writes) &&
    (base.checkpointable || !candidate.checkpointable) &&
    (!base.destructive || candidate.destructive) &&
    (!base.openWorld || candidate.openWorld) &&
    (base.idempotent || !candidate.idempotent)
  );
}
