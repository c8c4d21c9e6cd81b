import { compileToolPattern, type PatternMatcher } from '../approval';
import { ToolInvalidArgumentError } from '../errors';

/**
 * How much of a tool's output a caller gets back whole. An output over the
 * budget is kept in the runtime's result store, behind a handle, and the
 * caller gets a preview instead (see the README, "Results as handles").
 */
export interface OutputBudgetOptions {
  /** Most bytes of one output handed back whole (default 65,536; at least 1,024). */
  readonly bytes?: number;
  /** Budgets of their own for some tools, by tool-name glob (`builtin.fs.*`); the first entry that matches wins. */
  readonly tools?: readonly { readonly tools: string | readonly string[]; readonly bytes: number }[];
  /**
   * Most bytes of output one plan gets back whole, all its calls together
   * (default: no such limit). Once spent, every further output above
   * 4,096 bytes (about what a preview takes) is kept behind a handle.
   */
  readonly planBytes?: number;
}

/** The budgets, checked. */
export class OutputBudget {
  /** Outputs at most this large are never stored for the plan's budget (a preview would not be smaller). */
  static readonly PLAN_FLOOR_BYTES = 4_096;
  readonly bytes: number;
  readonly planBytes: number | undefined;
  private readonly entries: readonly { readonly matchers: readonly PatternMatcher[]; readonly bytes: number }[];
  private readonly byTool = new Map<string, number>();

  /** @throws ToolInvalidArgumentError for a budget of the wrong shape. */
  constructor(options: OutputBudgetOptions) {
    if (typeof options !== 'object' || options === null || Array.isArray(options)) {
      throw new ToolInvalidArgumentError({ argument: 'outputBudget', expected: 'an object { bytes?, tools?, planBytes? }', received: options });
    }
    for (const key of Object.keys(options)) {
      if (key !== 'bytes' && key !== 'tools' && key !== 'planBytes') {
        throw new ToolInvalidArgumentError({ argument: `outputBudget.${key}`, expected: 'absent: the fields are bytes, tools and planBytes', received: key });
      }
    }
    this.bytes = checkBytes(options.bytes ?? 65_536, 'outputBudget.bytes');
    this.planBytes = options.planBytes === undefined ? undefined : checkBytes(options.planBytes, 'outputBudget.planBytes');
    const tools = options.tools ?? [];
    if (!Array.isArray(tools)) throw new ToolInvalidArgumentError({ argument: 'outputBudget.tools', expected: 'a list of { tools, bytes }', received: tools });
    this.entries = tools.map((entry, index) => {
      const where = `outputBudget.tools[${index}]`;
      const patterns = typeof entry?.tools === 'string' ? [entry.tools] : entry?.tools;
      if (
        !Array.isArray(patterns) ||
        patterns.length === 0 ||
        patterns.some((pattern) => typeof pattern !== 'string' || pattern.length === 0 || pattern.length > 200)
      ) {
        throw new ToolInvalidArgumentError({
          argument: `${where}.tools`,
          expected: "a tool-name glob or a non-empty list of them, e.g. 'builtin.fs.*'",
          received: entry?.tools,
        });
      }
      return { matchers: patterns.map((pattern: string) => compileToolPattern(pattern)), bytes: checkBytes(entry.bytes, `${where}.bytes`) };
    });
  }

  /** The budget of one output of `toolName`. */
  forTool(toolName: string): number {
    let bytes = this.byTool.get(toolName);
    if (bytes === undefined) {
      bytes = this.entries.find((entry) => entry.matchers.some((matches) => matches(toolName)))?.bytes ?? this.bytes;
      if (this.byTool.size < 10_000) this.byTool.set(toolName, bytes);
    }
    return bytes;
  }
}

function checkBytes(value: unknown, argument: string): number {
  if (!Number.isSafeInteger(value) || (value as number) < 1_024) {
    throw new ToolInvalidArgumentError({ argument, expected: 'a whole number of bytes, at least 1024', received: value });
  }
  return value as number;
}
