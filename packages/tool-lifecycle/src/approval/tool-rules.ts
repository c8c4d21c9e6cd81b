import { describeValue } from '@ca/domain';
import { compileLinearPattern } from '@ca/schema';
import { canonicalJson } from './canonical-json';
import { ToolRuleError, type ToolRuleProblem } from '../errors';
import { compileToolPattern, type PatternMatcher } from './tool-pattern';

/** What a rule decides for the calls it matches. */
export type ToolRuleDecision = 'allow' | 'deny' | 'ask';

/**
 * How a rule tests one value of the arguments:
 * - `{ glob }`: the whole value matches the glob (`*` any run of characters, `?` one);
 * - `{ regex, ignoreCase? }`: the regular expression (ECMAScript syntax, run on
 *   the linear-time engine: no lookaround, no backreferences) is found in the
 *   value, as `RegExp.test` finds it — anchor it with `^…$` to match the whole;
 * - `{ equals }`: the value is this JSON value (compared in canonical form).
 *
 * A string is tested as it is; any other value as its canonical JSON text
 * (`["git","push"]`, `42`, `true`). A pointer that leads nowhere matches nothing.
 */
export type ArgumentMatcher = { readonly glob: string } | { readonly regex: string; readonly ignoreCase?: boolean } | { readonly equals: unknown };

/** A call a rule's examples name: a tool and, when the rule looks at them, its arguments. */
export interface ToolRuleExample {
  readonly tool: string;
  readonly arguments?: unknown;
}

/**
 * A rule of the service, as data: which calls it matches (tool-name patterns
 * and, optionally, patterns of argument values) and what it decides for
 * them. Loaded from the configuration; checked when loaded, examples included.
 */
export interface ToolRuleDefinition {
  /** Named in traces (`rule:<name>`), denials and errors; default `rules[i]`. */
  readonly name?: string;
  /**
   * `deny`: the call is refused without asking; `ask`: a person is asked,
   * whatever the plan's policy says; `allow`: the call runs without asking,
   * whatever the plan's policy says. When several rules match a call, the
   * strictest decides: deny, then ask, then allow.
   */
  readonly decision: ToolRuleDecision;
  /** Tool-name globs (one or a list): the rule applies to calls of a tool whose name matches one. */
  readonly tools: string | readonly string[];
  /**
   * Argument patterns, all of which must match: keys are JSON pointers into
   * the arguments (`/command/0`, `/path`; `""` is the whole), values say how
   * to test what the pointer finds (see {@link ArgumentMatcher}).
   */
  readonly arguments?: Readonly<Record<string, ArgumentMatcher>>;
  /** Said to the person (for `ask`) or in the error (for `deny`). */
  readonly reason?: string;
  /**
   * Calls that must match the rule and calls that must not, checked when the
   * rules are loaded: a rule that disagrees with its own examples stops the
   * service at start-up (`ToolRuleError`, problem `example`).
   */
  readonly examples?: {
    readonly match?: readonly ToolRuleExample[];
    readonly notMatch?: readonly ToolRuleExample[];
  };
}

/** What the rules decide for one call: the decision and the rule that made it. */
export interface ToolRuleVerdict {
  readonly decision: ToolRuleDecision;
  /** The rule's name. */
  readonly rule: string;
  /** The rule's reason, when it gives one. */
  readonly reason?: string;
}

/** Rules ready to decide calls (made by {@link compileToolRules}). */
export interface ToolRules {
  /** How many rules there are. */
  readonly size: number;
  /**
   * The strictest decision among the rules that match this call (deny, then
   * ask, then allow), or `undefined` when none matches.
   * @throws Never: a value that cannot be read matches nothing.
   */
  decide(toolName: string, args: unknown): ToolRuleVerdict | undefined;
  /** True when a rule's tool patterns match this tool name (its arguments may still not match). */
  coversTool(toolName: string): boolean;
}

const RULE_FIELDS = new Set(['name', 'decision', 'tools', 'arguments', 'reason', 'examples']);
const DECISIONS: readonly unknown[] = ['allow', 'deny', 'ask'];
const STRICTNESS: Readonly<Record<ToolRuleDecision, number>> = { allow: 1, ask: 2, deny: 3 };
/** Tool names a rule set remembers the applicable rules of; beyond, it starts again (names are few in practice). */
const TOOL_CACHE_LIMIT = 10_000;

interface CompiledArgument {
  readonly path: readonly string[];
  /** Tests the value the pointer found. */
  readonly test: (value: unknown) => boolean;
}

class CompiledRule {
  constructor(
    readonly name: string,
    readonly decision: ToolRuleDecision,
    readonly reason: string | undefined,
    private readonly toolMatchers: readonly PatternMatcher[],
    private readonly argumentMatchers: readonly CompiledArgument[],
  ) {}

  matchesTool(toolName: string): boolean {
    return this.toolMatchers.some((match) => match(toolName));
  }

  matchesArguments(args: unknown): boolean {
    for (const matcher of this.argumentMatchers) {
      const found = resolvePointer(args, matcher.path);
      if (!found.exists || !matcher.test(found.value)) return false;
    }
    return true;
  }
}

class CompiledToolRules implements ToolRules {
  private readonly byTool = new Map<string, readonly CompiledRule[]>();

  constructor(private readonly rules: readonly CompiledRule[]) {}

  get size(): number {
    return this.rules.length;
  }

  coversTool(toolName: string): boolean {
    return this.rulesFor(toolName).length > 0;
  }

  decide(toolName: string, args: unknown): ToolRuleVerdict | undefined {
    const candidates = this.rulesFor(toolName);
    if (candidates.length === 0) return undefined;
    let chosen: CompiledRule | undefined;
    for (const rule of candidates) {
      if (chosen !== undefined && STRICTNESS[rule.decision] <= STRICTNESS[chosen.decision]) continue;
      if (!rule.matchesArguments(args)) continue;
      chosen = rule;
      if (rule.decision === 'deny') break;
    }
    if (chosen === undefined) return undefined;
    return chosen.reason === undefined
      ? { decision: chosen.decision, rule: chosen.name }
      : { decision: chosen.decision, rule: chosen.name, reason: chosen.reason };
  }

  private rulesFor(toolName: string): readonly CompiledRule[] {
    let rules = this.byTool.get(toolName);
    if (rules === undefined) {
      rules = this.rules.filter((rule) => rule.matchesTool(toolName));
      if (this.byTool.size >= TOOL_CACHE_LIMIT) this.byTool.clear();
      this.byTool.set(toolName, rules);
    }
    return rules;
  }
}

/**
 * Checks and compiles rules (see {@link ToolRuleDefinition}): every field,
 * every pattern (regular expressions on the linear-time engine), and every
 * example, which must come out as the rule says.
 *
 * @throws ToolRuleError naming the rule, the field and what to write instead.
 */
export function compileToolRules(definitions: readonly ToolRuleDefinition[]): ToolRules {
  if (!Array.isArray(definitions)) {
    throw new ToolRuleError({
      rule: 'rules',
      index: -1,
      field: 'rules',
      problem: 'invalid',
      detail: `expected a list of rules, got ${describeValue(definitions)}.`,
    });
  }
  const names = new Set<string>();
  const rules = definitions.map((definition, index) => {
    const rule = compileRule(definition, index);
    if (names.has(rule.name)) {
      throw new ToolRuleError({
        rule: rule.name,
        index,
        field: 'name',
        problem: 'invalid',
        detail: 'another rule has this name; give each rule its own, so that traces and errors say which one decided.',
      });
    }
    names.add(rule.name);
    return rule;
  });
  return new CompiledToolRules(rules);
}

function compileRule(definition: unknown, index: number): CompiledRule {
  const record = (typeof definition === 'object' && definition !== null && !Array.isArray(definition) ? definition : undefined) as
    Record<string, unknown> | undefined;
  const givenName = record?.['name'];
  const name = typeof givenName === 'string' && givenName.trim().length > 0 ? givenName : `rules[${index}]`;
  const fail = (field: string, detail: string, problem: ToolRuleProblem = 'invalid', cause?: unknown): never => {
    throw new ToolRuleError({ rule: name, index, field, problem, detail, ...(cause === undefined ? {} : { cause }) });
  };
  if (record === undefined) return fail('', `expected { name, decision, tools, arguments?, reason?, examples? }, got ${describeValue(definition)}.`);
  for (const key of Object.keys(record)) {
    if (!RULE_FIELDS.has(key)) fail(key, 'is not a field of a rule; a rule has name, decision, tools, arguments, reason and examples (check the spelling).');
  }
  if (givenName !== undefined && (typeof givenName !== 'string' || givenName.trim().length === 0 || givenName.length > 200)) {
    fail('name', `expected a name of 1–200 characters, got ${describeValue(givenName)}.`);
  }
  const decision = record['decision'];
  if (!DECISIONS.includes(decision)) fail('decision', `expected 'allow', 'deny' or 'ask', got ${describeValue(decision)}.`);
  const reason = record['reason'];
  if (reason !== undefined && typeof reason !== 'string') fail('reason', `expected a sentence, got ${describeValue(reason)}.`);

  const toolsValue = record['tools'];
  const tools = typeof toolsValue === 'string' ? [toolsValue] : toolsValue;
  if (!Array.isArray(tools) || tools.length === 0) {
    fail('tools', `expected a tool-name pattern or a non-empty list of them (e.g. 'builtin.fs.*'), got ${describeValue(toolsValue)}.`);
  }
  const toolMatchers = (tools as unknown[]).map((pattern, position) => {
    if (typeof pattern !== 'string' || pattern.length === 0 || pattern.length > 200) {
      return fail(`tools[${position}]`, `expected a tool-name pattern of 1–200 characters, got ${describeValue(pattern)}.`);
    }
    return compileGlob(pattern, `tools[${position}]`, fail);
  });

  const argumentsValue = record['arguments'];
  const argumentMatchers: CompiledArgument[] = [];
  if (argumentsValue !== undefined) {
    if (typeof argumentsValue !== 'object' || argumentsValue === null || Array.isArray(argumentsValue)) {
      fail('arguments', `expected an object of JSON pointer -> matcher, e.g. { "/command/0": { "glob": "git" } }, got ${describeValue(argumentsValue)}.`);
    }
    for (const [pointer, matcher] of Object.entries(argumentsValue as Record<string, unknown>)) {
      argumentMatchers.push(compileArgument(pointer, matcher, `arguments.${pointer === '' ? '""' : pointer}`, fail));
    }
  }
  const rule = new CompiledRule(name, decision as ToolRuleDecision, reason as string | undefined, toolMatchers, argumentMatchers);
  checkExamples(rule, record['examples'], fail);
  return rule;
}

function compileGlob(
  pattern: string,
  field: string,
  fail: (field: string, detail: string, problem?: ToolRuleProblem, cause?: unknown) => never,
): PatternMatcher {
  try {
    return compileToolPattern(pattern);
  } catch (error) {
    return fail(field, `the glob ${JSON.stringify(pattern)} cannot be compiled: ${(error as Error).message}`, 'pattern', error);
  }
}

function compileArgument(
  pointer: string,
  matcher: unknown,
  field: string,
  fail: (field: string, detail: string, problem?: ToolRuleProblem, cause?: unknown) => never,
): CompiledArgument {
  if (pointer !== '' && !pointer.startsWith('/')) {
    fail(field, `"${pointer}" is not a JSON pointer: write "/${pointer}" (or "" for the whole arguments).`);
  }
  const path =
    pointer === ''
      ? []
      : pointer
          .slice(1)
          .split('/')
          .map((segment) => segment.replace(/~1/g, '/').replace(/~0/g, '~'));
  const record = (typeof matcher === 'object' && matcher !== null && !Array.isArray(matcher) ? matcher : undefined) as Record<string, unknown> | undefined;
  const keys = record === undefined ? [] : Object.keys(record);
  const shape = 'expected one of { "glob": "…" }, { "regex": "…", "ignoreCase"?: true } or { "equals": <JSON value> }';
  if (record === undefined) return fail(field, `${shape}, got ${describeValue(matcher)}.`);
  if ('equals' in record) {
    if (keys.length !== 1) fail(field, `${shape}; "equals" stands alone.`);
    let expected: string;
    try {
      expected = canonicalJson(record['equals']);
    } catch (error) {
      return fail(field, `"equals" must be a JSON value: ${(error as Error).message}`, 'invalid', error);
    }
    return { path, test: (value) => canonicalOrUndefined(value) === expected };
  }
  if (typeof record['glob'] === 'string') {
    if (keys.length !== 1) fail(field, `${shape}; "glob" stands alone.`);
    const glob = compileGlob(record['glob'], `${field}.glob`, fail);
    return { path, test: (value) => testText(value, glob) };
  }
  if (typeof record['regex'] === 'string') {
    const ignoreCase = record['ignoreCase'];
    if (keys.some((key) => key !== 'regex' && key !== 'ignoreCase') || (ignoreCase !== undefined && typeof ignoreCase !== 'boolean')) {
      fail(field, `${shape}.`);
    }
    try {
      const compiled = compileLinearPattern(record['regex'], { ignoreCase: ignoreCase === true });
      return { path, test: (value) => testText(value, (text) => compiled.test(text)) };
    } catch (error) {
      return fail(`${field}.regex`, `${(error as Error).message}`, 'pattern', error);
    }
  }
  return fail(field, `${shape}, got ${describeValue(matcher)}.`);
}

function canonicalOrUndefined(value: unknown): string | undefined {
  try {
    return canonicalJson(value);
  } catch {
    return undefined;
  }
}

/** A glob or regex tests a string as it is, anything else as its canonical JSON text; a value with none matches nothing. */
function testText(value: unknown, test: (text: string) => boolean): boolean {
  const text = typeof value === 'string' ? value : canonicalOrUndefined(value);
  return text !== undefined && test(text);
}

function checkExamples(
  rule: CompiledRule,
  examples: unknown,
  fail: (field: string, detail: string, problem?: ToolRuleProblem, cause?: unknown) => never,
): void {
  if (examples === undefined) return;
  if (typeof examples !== 'object' || examples === null || Array.isArray(examples)) {
    fail('examples', `expected { match?: [...], notMatch?: [...] }, got ${describeValue(examples)}.`);
  }
  const record = examples as Record<string, unknown>;
  for (const key of Object.keys(record)) {
    if (key !== 'match' && key !== 'notMatch') fail(`examples.${key}`, 'examples have only match and notMatch (check the spelling).');
  }
  for (const [kind, expected] of [
    ['match', true],
    ['notMatch', false],
  ] as const) {
    const list = record[kind];
    if (list === undefined) continue;
    if (!Array.isArray(list)) fail(`examples.${kind}`, `expected a list of { tool, arguments? }, got ${describeValue(list)}.`);
    (list as unknown[]).forEach((example, position) => {
      const field = `examples.${kind}[${position}]`;
      const call = (typeof example === 'object' && example !== null && !Array.isArray(example) ? example : undefined) as Record<string, unknown> | undefined;
      if (call === undefined || typeof call['tool'] !== 'string' || Object.keys(call).some((key) => key !== 'tool' && key !== 'arguments')) {
        fail(field, `expected { tool: '<tool name>', arguments?: { … } }, got ${describeValue(example)}.`);
      }
      const toolName = (call as Record<string, unknown>)['tool'] as string;
      const args = (call as Record<string, unknown>)['arguments'] ?? {};
      const matches = rule.matchesTool(toolName) && rule.matchesArguments(args);
      if (matches !== expected) {
        const described = `${toolName} ${safeDescribe(args)}`;
        fail(
          field,
          expected
            ? `the rule does not match its own example ${described}, which it must match. Fix the rule's patterns or the example.`
            : `the rule matches its own example ${described}, which it must not match. Fix the rule's patterns or the example.`,
          'example',
        );
      }
    });
  }
}

function safeDescribe(value: unknown): string {
  try {
    const text = canonicalJson(value);
    return text.length > 200 ? `${text.slice(0, 200)}…` : text;
  } catch {
    return describeValue(value);
  }
}

/** The value at a JSON pointer, through own properties only (never `__proto__` or an inherited name). */
function resolvePointer(value: unknown, path: readonly string[]): { readonly exists: boolean; readonly value?: unknown } {
  let current = value;
  for (const segment of path) {
    if (Array.isArray(current)) {
      if (!/^(0|[1-9][0-9]*)$/.test(segment)) return { exists: false };
      const index = Number(segment);
      if (index >= current.length) return { exists: false };
      current = current[index];
    } else if (typeof current === 'object' && current !== null && Object.prototype.hasOwnProperty.call(current, segment)) {
      current = (current as Record<string, unknown>)[segment];
    } else {
      return { exists: false };
    }
  }
  return { exists: true, value: current };
}
