import { createHash } from 'node:crypto';

/** The wire formats the front door speaks. */
export type ModelToolFormat = 'openai-responses' | 'openai-chat' | 'anthropic' | 'gemini' | 'mcp';

/** Every format, in a stable order. */
export const MODEL_TOOL_FORMATS: readonly ModelToolFormat[] = Object.freeze(['openai-responses', 'openai-chat', 'anthropic', 'gemini', 'mcp']);

/** What a provider accepts as a tool name. */
export interface ProviderNameRules {
  /** Longest name. */
  readonly maxLength: number;
  /** One character the provider accepts. */
  readonly allowed: RegExp;
  /** What the first character must be, when the provider says (Gemini: a letter or `_`). */
  readonly first?: RegExp;
}

// OpenAI (both APIs) and Anthropic: ^[a-zA-Z0-9_-]{1,64}$. Gemini: starts with a
// letter or '_', then letters, digits, '_', '.', ':' or '-', at most 64. MCP
// (2025-11-25): 1–128 of letters, digits, '_', '-' and '.'.
const OPENAI_RULES: ProviderNameRules = Object.freeze({ maxLength: 64, allowed: /[A-Za-z0-9_-]/ });
const NAME_RULES: Readonly<Record<ModelToolFormat, ProviderNameRules>> = Object.freeze({
  'openai-responses': OPENAI_RULES,
  'openai-chat': OPENAI_RULES,
  anthropic: Object.freeze({ maxLength: 64, allowed: /[A-Za-z0-9_-]/ }),
  gemini: Object.freeze({ maxLength: 64, allowed: /[A-Za-z0-9_.:-]/, first: /[A-Za-z_]/ }),
  mcp: Object.freeze({ maxLength: 128, allowed: /[A-Za-z0-9_.-]/ }),
});

/**
 * The names `createOpenAiAgentsTools` gives tools: letters, digits and `_`
 * (the Agents SDK turns every other character of a function tool's name
 * into `_`), at most 64. `mcp.notes.get-note` is `mcp_notes_get_note`. With
 * `ModelTools.tools(plan, OPENAI_AGENTS_NAME_RULES)` (or a `ToolNameMap`), an
 * interruption's `name` maps back to the runtime's tool.
 */
export const OPENAI_AGENTS_NAME_RULES: ProviderNameRules = Object.freeze({ maxLength: 64, allowed: /[A-Za-z0-9_]/ });

/** The name rules of a format. */
export function nameRulesOf(format: ModelToolFormat): ProviderNameRules {
  return NAME_RULES[format];
}

/** Characters of the hash that tells apart names that would otherwise be one. */
const HASH_LENGTH = 8;

/**
 * The runtime's tool names and the names a provider sees, both ways. Built
 * from every tool of the catalog at once, so that no two tools share a
 * provider name; a tool's provider name depends on its own name only, unless
 * another tool of the catalog would map to the same text (then both carry a
 * hash of their own name), so it is the same on every call and in every plan.
 */
export class ToolNameMap {
  private readonly toProviderNames = new Map<string, string>();
  private readonly fromProviderNames = new Map<string, string>();

  /**
   * @param names - The runtime's tool names (any order; duplicates are ignored).
   * @param rules - What the provider accepts.
   */
  constructor(
    names: Iterable<string>,
    readonly rules: ProviderNameRules,
  ) {
    const groups = new Map<string, string[]>();
    for (const name of new Set(names)) {
      const base = sanitize(name, rules);
      const group = groups.get(base);
      if (group === undefined) groups.set(base, [name]);
      else group.push(name);
    }
    const taken = new Set<string>();
    const pending: string[] = [];
    for (const [base, group] of groups) {
      if (group.length === 1 && base.length <= rules.maxLength) {
        this.add(group[0] as string, base, taken);
      } else {
        pending.push(...group);
      }
    }
    // Names that collide or are too long: cut to fit and told apart by a hash of the whole name.
    for (const name of pending.sort()) {
      let provider = withHash(sanitize(name, rules), name, rules.maxLength, HASH_LENGTH);
      // A hash that meets another name by chance: the longest hash that fits.
      if (taken.has(provider)) provider = withHash('t', name, rules.maxLength, Math.min(43, rules.maxLength - 2));
      this.add(name, provider, taken);
    }
  }

  /** The provider's name of a runtime tool, or `undefined` when the map does not hold it. */
  toProvider(name: string): string | undefined {
    return this.toProviderNames.get(name);
  }

  /** The runtime's name of a provider name, or `undefined` when no tool has it. */
  fromProvider(providerName: string): string | undefined {
    return this.fromProviderNames.get(providerName);
  }

  /** Every provider name, for messages that list them. */
  providerNames(): IterableIterator<string> {
    return this.fromProviderNames.keys();
  }

  private add(name: string, provider: string, taken: Set<string>): void {
    taken.add(provider);
    this.toProviderNames.set(name, provider);
    this.fromProviderNames.set(provider, name);
  }
}

/** Each character the provider refuses becomes `_`; a first character it refuses gets a `_` before it. */
function sanitize(name: string, rules: ProviderNameRules): string {
  let out = '';
  for (const character of name) out += rules.allowed.test(character) ? character : '_';
  if (out.length === 0) return '_';
  if (rules.first !== undefined && !rules.first.test(out[0] as string)) out = `_${out}`;
  return out;
}

function withHash(base: string, name: string, maxLength: number, hashLength: number): string {
  const hash = createHash('sha256')
    .update(name, 'utf8')
    .digest('base64url')
    .replace(/[^A-Za-z0-9]/g, '0')
    .slice(0, hashLength);
  const room = maxLength - hashLength - 1;
  return `${base.slice(0, room)}_${hash}`;
}
