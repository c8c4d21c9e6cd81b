import type { ApprovalGate } from '../approval';
import type { PlanCallRecords } from '../calls';
import type { ToolLifecycleCache } from '../plan';
import type { RuntimeLogger } from '../observability';
import type { PlanRegistry } from './plan-registry';
import { PlanRegistryLink } from './plan-registry-link';

/** What a runtime's registry link reads about the runtime's plans. */
export interface RuntimePlanParts {
  readonly cache: ToolLifecycleCache;
  readonly plans: PlanCallRecords;
  readonly approvals: ApprovalGate;
  /** Answers to approval requests are taken from the registry (`registryApprovals`). */
  readonly registryApprovals: boolean;
}

/**
 * Links a runtime's plans to its plan registry: their active tools, their
 * waiting approval requests (listed only with `registryApprovals`), and
 * answers to them that come through the registry (ignored with a warning
 * without `registryApprovals`).
 * @throws ToolInvalidArgumentError when `registry` is not a PlanRegistry.
 */
export function linkToRegistry(registry: PlanRegistry, logger: RuntimeLogger, parts: RuntimePlanParts): PlanRegistryLink {
  const { cache, plans, approvals, registryApprovals } = parts;
  return new PlanRegistryLink(registry, logger, {
    activeTools: (planId) => cache.activeTools(planId),
    pendingApprovals: (ctx) => (registryApprovals ? (plans.existing(ctx)?.pendingSummaries() ?? []) : []),
    answerApproval: (ctx, message) => {
      const description = registry.description ?? '';
      if (registryApprovals) {
        approvals.answerFromRegistry(plans.existing(ctx), ctx.planId, message, description);
        return;
      }
      logger.warn(
        `Plan '${ctx.planId}' received an answer to an approval request through plan registry ${description}; this runtime does not take answers from its registry (option registryApprovals), so it was ignored.`,
        { planId: ctx.planId },
      );
    },
  });
}
