import { PLAN_REGISTRY, PlanRegistryError } from '@ca/tool-lifecycle';
import type { DependencyContainer } from 'tsyringe';
import { connectRedisPlanRegistry, type RedisPlanRegistry } from './redis-plan-registry';
import type { RedisPlanRegistrySettings } from './redis-plan-registry-settings';

/**
 * Connects a {@link RedisPlanRegistry} and registers it in `container` under
 * `PLAN_REGISTRY`, where `registerToolRuntime` finds it: call it before the
 * runtime is first resolved. Returns the registry, which the service closes
 * once its plans have ended (`await registry.close()`).
 * @throws PlanRegistryError as `connectRedisPlanRegistry` does, and
 *   `PLAN_REGISTRY_INVALID_ARGUMENT` when `container` is not a tsyringe container.
 */
export async function registerRedisPlanRegistry(container: DependencyContainer, settings: RedisPlanRegistrySettings): Promise<RedisPlanRegistry> {
  if (typeof container?.register !== 'function' || typeof container.resolve !== 'function') {
    throw new PlanRegistryError({
      code: 'PLAN_REGISTRY_INVALID_ARGUMENT',
      registry: 'redis',
      reason: 'container must be a tsyringe DependencyContainer (e.g. container.createChildContainer())',
    });
  }
  const registry = await connectRedisPlanRegistry(settings);
  container.register(PLAN_REGISTRY, { useValue: registry });
  return registry;
}
