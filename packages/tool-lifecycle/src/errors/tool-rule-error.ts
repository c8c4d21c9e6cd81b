import { ToolRuntimeError } from './tool-runtime-error';

/**
 * What is wrong with a rule:
 * - `'invalid'`: a field is missing or has the wrong shape;
 * - `'pattern'`: a regular expression the linear-time engine cannot run, or a glob that is not one;
 * - `'example'`: one of the rule's own examples does not come out as the rule says it must.
 */
export type ToolRuleProblem = 'invalid' | 'pattern' | 'example';

/** Options of {@link ToolRuleError}. */
export interface ToolRuleErrorOptions {
  /** The rule's name (or `rules[i]` when it has none). */
  readonly rule: string;
  /** Where the rule is in the list. */
  readonly index: number;
  /** The offending field, as a path in the rule: `tools`, `arguments./path`, `examples.match[0]`. */
  readonly field: string;
  readonly problem: ToolRuleProblem;
  /** What is wrong and what to write instead. */
  readonly detail: string;
  readonly cause?: unknown;
}

/**
 * A rule given to the runtime (`options.rules`, `compileToolRules`) is not
 * valid, or one of its examples fails: raised when the rules are loaded, so
 * that a broken rule stops the service at start-up rather than deciding
 * wrongly in production.
 *
 * Code: `TOOL_RULE_INVALID`.
 */
export class ToolRuleError extends ToolRuntimeError {
  declare readonly code: 'TOOL_RULE_INVALID';
  /** The rule concerned. */
  readonly rule: string;
  /** Where the rule is in the list. */
  readonly index: number;
  /** The offending field of the rule. */
  readonly field: string;
  readonly problem: ToolRuleProblem;

  constructor(options: ToolRuleErrorOptions) {
    const { rule, index, field, detail } = options;
    super('TOOL_RULE_INVALID', `Rule '${rule}' (rules[${index}]) is invalid at ${field}: ${detail}`, options);
    this.rule = rule;
    this.index = index;
    this.field = field;
    this.problem = options.problem;
  }
}
