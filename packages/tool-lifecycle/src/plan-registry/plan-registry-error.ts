import { asClause, CaError } from '@ca/domain';

/** Stable codes of {@link PlanRegistryError}. */
export type PlanRegistryErrorCode =
  | 'PLAN_REGISTRY_INVALID_ARGUMENT'
  | 'PLAN_REGISTRY_UNAVAILABLE'
  | 'PLAN_REGISTRY_AUTH_FAILED'
  | 'PLAN_REGISTRY_PLAN_NOT_FOUND'
  | 'PLAN_REGISTRY_DUPLICATE_PLAN'
  | 'PLAN_REGISTRY_CLOSED';

/** Options of {@link PlanRegistryError}. */
export interface PlanRegistryErrorOptions {
  readonly code: PlanRegistryErrorCode;
  /** The registry, as its `description` says (never with credentials). */
  readonly registry: string;
  readonly planId?: string;
  /** What went wrong, in the registry's terms (already free of secrets). */
  readonly reason?: string;
  /** What to do, when the registry knows better than the default advice of the code. */
  readonly advice?: string;
  readonly cause?: unknown;
}

const DEFAULT_ADVICE: Record<PlanRegistryErrorCode, string> = {
  PLAN_REGISTRY_INVALID_ARGUMENT: 'Fix the value named above.',
  PLAN_REGISTRY_UNAVAILABLE: 'Check that the registry runs and that this machine reaches it; running plans go on meanwhile and register again once it is back.',
  PLAN_REGISTRY_AUTH_FAILED: 'Check the user name and password the registry is given.',
  PLAN_REGISTRY_PLAN_NOT_FOUND: 'List the running plans to see their ids; a plan that has ended, or whose process died, is no longer listed.',
  PLAN_REGISTRY_DUPLICATE_PLAN: 'Plan ids must be unique across the registry: choose another id, or cancel the running plan first.',
  PLAN_REGISTRY_CLOSED: 'Create the registry again; close it only once its plans have ended.',
};

function subject(code: PlanRegistryErrorCode, registry: string, planId: string | undefined): string {
  const plan = planId === undefined ? '' : ` '${planId}'`;
  switch (code) {
    case 'PLAN_REGISTRY_UNAVAILABLE':
      return `Plan registry ${registry} cannot be reached`;
    case 'PLAN_REGISTRY_AUTH_FAILED':
      return `Plan registry ${registry} refused the credentials`;
    case 'PLAN_REGISTRY_PLAN_NOT_FOUND':
      return `No running plan has id${plan} in plan registry ${registry}`;
    case 'PLAN_REGISTRY_DUPLICATE_PLAN':
      return `A running plan already has id${plan} in plan registry ${registry}`;
    case 'PLAN_REGISTRY_CLOSED':
      return `Plan registry ${registry} is closed`;
    default:
      return `Plan registry ${registry}${planId === undefined ? '' : `, plan${plan}`}`;
  }
}

/**
 * A plan registry could not do what was asked: the registry cannot be reached
 * or refused the credentials, no running plan has the id, the id is taken,
 * an argument has the wrong shape, or the registry was closed. Every
 * implementation of `PlanRegistry` throws this one class, so callers tell
 * failures apart by `code` whatever the store.
 */
export class PlanRegistryError extends CaError {
  declare readonly code: PlanRegistryErrorCode;
  /** The registry concerned, as its `description` says. */
  readonly registry: string;
  /** What went wrong, when known. */
  readonly reason: string | undefined;

  constructor(options: PlanRegistryErrorOptions) {
    const { code, registry, planId, reason, advice } = options;
    super(
      code,
      `${subject(code, registry, planId)}${reason === undefined || asClause(reason) === '' ? '' : `: ${asClause(reason)}`}. ${advice ?? DEFAULT_ADVICE[code]}`,
      {
        ...(planId === undefined ? {} : { planId }),
        ...(options.cause === undefined ? {} : { cause: options.cause }),
      },
    );
    this.registry = registry;
    this.reason = reason;
  }
}
