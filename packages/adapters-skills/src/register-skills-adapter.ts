import { TOOL_SOURCE, containerLogger } from '@ca/tool-lifecycle';
import type { DependencyContainer } from 'tsyringe';
import { SkillError } from './skill-error';
import type { SkillsAdapterSettings } from './skills-adapter-settings';
import { createSkillsAdapter, type SkillsToolSource } from './skills-tool-source';

/**
 * Creates the Agent Skills source and registers it in `container` under
 * `TOOL_SOURCE` (multi-registration, next to other adapters' sources).
 * Register it before resolving the runtime. Never touches tsyringe's global
 * container unless you pass it.
 *
 * @example
 * const child = container.createChildContainer();
 * registerSkillsAdapter(child, { roots: ['.agents/skills'] });
 * registerToolRuntime(child);
 * const runtime = child.resolve(TOOL_RUNTIME);
 *
 * @returns The registered source (for `diagnostics()`).
 * @throws {SkillError} `SKILL_INVALID_SETTINGS` when `container` is not a tsyringe container or the settings are malformed.
 */
export function registerSkillsAdapter(container: DependencyContainer, settings: SkillsAdapterSettings = {}): SkillsToolSource {
  if (typeof container?.register !== 'function') {
    throw new SkillError({
      code: 'SKILL_INVALID_SETTINGS',
      problem: 'needs a tsyringe DependencyContainer to register with',
      remedy: 'Call registerSkillsAdapter(container, settings) with one, e.g. container.createChildContainer().',
    });
  }
  // The container's logger, for what the adapter warns about; a malformed settings value is left for the check to refuse.
  const source = createSkillsAdapter(
    typeof settings === 'object' && settings !== null && settings.logger === undefined ? { ...settings, logger: containerLogger(container) } : settings,
  );
  container.register(TOOL_SOURCE, { useValue: source });
  return source;
}
