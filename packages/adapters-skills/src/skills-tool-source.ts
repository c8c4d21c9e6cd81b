import type { ToolSourceKind } from '@ca/domain';
import { closestNames, ToolNotFoundError, type ToolDescriptor, type ToolInstance, type ToolSource, type UnavailableTool } from '@ca/tool-lifecycle';
import { discoverResolved, type DiscoveredSkill, type SkillDiscoveryResult } from './discover-skills';
import type { SkillDiagnostic } from './skill-diagnostic';
import { SkillError } from './skill-error';
import { SkillScriptTool } from './skill-script-tool';
import { SkillTool } from './skill-tool';
import { resolveSkillsSettings, type ResolvedSkillsSettings, type SkillsAdapterSettings } from './skills-adapter-settings';

/**
 * The Agent Skills {@link ToolSource}: every skill folder under the
 * configured roots becomes a read-only tool `skill.<name>`, and — only when
 * `allowScripts` says so — every file under its `scripts/` a tool
 * `skill.<name>.script.<stem>`.
 *
 * `discover` rescans the roots and reads frontmatter only; the body of a
 * skill is loaded when the tool is activated in a plan.
 */
export class SkillsToolSource implements ToolSource {
  /** Always `'skill'`. */
  readonly kind: ToolSourceKind = 'skill';
  /** Skill folders come from outside the service: schemas are compiled as untrusted. */
  readonly schemaTrust = 'untrusted' as const;
  /** `skills:<root>,<root>…` unless set in the settings. */
  readonly id: string;
  private readonly settings: ResolvedSkillsSettings;
  private tools = new Map<string, ToolInstance>();
  private lastDiscovery: SkillDiscoveryResult | undefined;
  private discovering: Promise<readonly ToolDescriptor[]> | undefined;

  /**
   * @param settings - See {@link SkillsAdapterSettings}.
   * @throws {SkillError} `SKILL_INVALID_SETTINGS` when the settings are malformed.
   */
  constructor(settings: SkillsAdapterSettings = {}) {
    this.settings = resolveSkillsSettings(settings);
    this.id = this.settings.id;
  }

  /** The absolute roots scanned, in priority order. */
  get roots(): readonly string[] {
    return this.settings.roots;
  }

  /**
   * Scans the roots and returns one descriptor per usable skill (and allowed
   * script). Skipped skills are reported by {@link SkillsToolSource.unavailable}
   * and, with every warning, by {@link SkillsToolSource.diagnostics}.
   * @throws The signal's reason when `signal` aborts.
   */
  async discover(signal?: AbortSignal): Promise<readonly ToolDescriptor[]> {
    const result = await discoverResolved(this.settings, signal);
    // Whether scripts run in the kernel sandbox decides their capability (with 'auto', probed once per process).
    const sandboxed = result.skills.some((skill) => skill.scripts.length > 0) && (await this.settings.sandbox.isEnabled());
    const previous = this.tools;
    const tools = new Map<string, ToolInstance>();
    for (const skill of result.skills) {
      add(tools, reuse(previous.get(skill.toolName), skill) ?? new SkillTool(skill, this.settings));
      for (const script of skill.scripts) {
        const old = previous.get(script.toolName);
        const same =
          old instanceof SkillScriptTool &&
          JSON.stringify(old.script) === JSON.stringify(script) &&
          old.skill.path === skill.path &&
          old.sandboxed === sandboxed;
        add(tools, same ? old : new SkillScriptTool(skill, script, this.settings, sandboxed));
      }
    }
    this.tools = tools;
    this.lastDiscovery = result;
    return [...tools.values()].map((tool) => tool.descriptor);
  }

  /**
   * The tool of that name, discovering first if `discover` never ran.
   * @throws {ToolNotFoundError} `TOOL_NOT_FOUND` (with the closest names) when this source never offered the name.
   * @throws {SkillError} `SKILL_NOT_FOUND` (with `diagnosticCode`) when discovery skipped the skill of that name.
   */
  async get(name: string): Promise<ToolInstance> {
    if (this.lastDiscovery === undefined) {
      this.discovering ??= this.discover().finally(() => {
        this.discovering = undefined;
      });
      await this.discovering;
    }
    const tool = this.tools.get(name);
    if (tool !== undefined) return tool;
    const skipped = this.lastDiscovery?.skipped.find((entry) => entry.toolName === name);
    if (skipped === undefined) {
      throw new ToolNotFoundError({ toolName: String(name), sourceId: this.id, suggestions: closestNames(String(name), [...this.tools.keys()]) });
    }
    throw new SkillError({
      code: 'SKILL_NOT_FOUND',
      toolName: name,
      skillPath: skipped.path,
      diagnosticCode: skipped.diagnostic.code,
      problem: `was skipped at discovery: ${skipped.diagnostic.message}`,
    });
  }

  /** Skills seen at the last discovery but skipped, each with the reason and a `SKILL_INVALID` error. */
  unavailable(): readonly UnavailableTool[] {
    const skipped = this.lastDiscovery?.skipped ?? [];
    return skipped
      .filter((entry) => !this.tools.has(entry.toolName))
      .map((entry) => ({
        name: entry.toolName,
        source: this.kind,
        reason: entry.diagnostic.message,
        error: new SkillError({
          code: 'SKILL_INVALID',
          toolName: entry.toolName,
          skillPath: entry.path,
          diagnosticCode: entry.diagnostic.code,
          problem: `was skipped at discovery (${entry.diagnostic.code}), its skill at '${entry.path}': ${entry.diagnostic.message}`,
        }),
      }));
  }

  /** Every diagnostic of the last discovery (empty before the first). */
  diagnostics(): readonly SkillDiagnostic[] {
    return this.lastDiscovery?.diagnostics ?? [];
  }

  /** The skills accepted by the last discovery (empty before the first). */
  skills(): readonly DiscoveredSkill[] {
    return this.lastDiscovery?.skills ?? [];
  }
}

/**
 * Creates the Agent Skills tool source.
 *
 * @example
 * const source = createSkillsAdapter({ roots: ['.agents/skills'], cwd: '/home/me/project' });
 *
 * @throws {SkillError} `SKILL_INVALID_SETTINGS` when the settings are malformed.
 */
export function createSkillsAdapter(settings: SkillsAdapterSettings = {}): SkillsToolSource {
  return new SkillsToolSource(settings);
}

/** Keeps the instance of an unchanged skill, so plans that activated it keep their loaded body across rediscovery. */
function reuse(previous: ToolInstance | undefined, skill: DiscoveredSkill): SkillTool | undefined {
  if (!(previous instanceof SkillTool)) return undefined;
  const { scripts: _oldScripts, ...oldSkill } = previous.skill;
  const { scripts: _newScripts, ...newSkill } = skill;
  return JSON.stringify(oldSkill) === JSON.stringify(newSkill) ? previous : undefined;
}

/** A script's tool name can only clash with a skill whose (invalid) name contains `.script.`; the first one wins. */
function add(tools: Map<string, ToolInstance>, tool: ToolInstance): void {
  if (!tools.has(tool.descriptor.name)) tools.set(tool.descriptor.name, tool);
}
