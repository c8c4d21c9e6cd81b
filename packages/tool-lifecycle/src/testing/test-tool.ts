import { normalizeCapability, type JsonSchema, type ToolCapabilityInput, type ToolSourceKind } from '@ca/domain';
import type { ChangeInput, ToolExecutionContext } from '@ca/tool-context';
import type { ToolDescriptor, ToolCallOptions, ToolInstance, ToolResult } from '../tool';

/** One lifecycle event a {@link TestTool} saw. */
export interface TestToolEvent {
  readonly type: 'activate' | 'execute' | 'deactivate';
  readonly planId: string;
  readonly executionId?: string;
  readonly input?: unknown;
}

/** How to build a {@link TestTool}; every field but `name` has a default. */
export interface TestToolOptions<I = unknown, O = unknown> {
  readonly name: string;
  readonly description?: string;
  readonly source?: ToolSourceKind;
  readonly capability?: ToolCapabilityInput;
  readonly inputSchema?: JsonSchema;
  readonly outputSchema?: JsonSchema;
  readonly strictOutput?: boolean;
  readonly timeoutMs?: number;
  /** Runs on execute; default echoes the input as output. May return a bare output or a ToolResult. */
  readonly execute?: (input: I, ctx: ToolExecutionContext, options?: ToolCallOptions) => Promise<O | ToolResult<O>> | O | ToolResult<O>;
  /** Runs on activate (after the event is recorded). */
  readonly activate?: (ctx: ToolExecutionContext) => Promise<void> | void;
  /** Runs on deactivate (after the event is recorded). */
  readonly deactivate?: (ctx: ToolExecutionContext) => Promise<void> | void;
  /** When true the tool has no `activate` and `deactivate` methods at all. */
  readonly stateless?: boolean;
  /** Changes to report with every successful result. */
  readonly changes?: readonly ChangeInput[];
  /** Whether `execute` wraps a bare value as `{ ok: true, output }` (default true). */
  readonly wrapOutput?: boolean;
}

/**
 * An in-memory {@link ToolInstance} that records every lifecycle call, for
 * tests of the runtime and of adapters. It has `activate` and `deactivate`
 * steps (recorded) unless `stateless`, and by default echoes its input.
 */
export class TestTool<I = unknown, O = unknown> implements ToolInstance<I, O> {
  readonly descriptor: ToolDescriptor;
  readonly events: TestToolEvent[] = [];
  private readonly options: TestToolOptions<I, O>;

  constructor(options: TestToolOptions<I, O>) {
    this.options = options;
    this.descriptor = Object.freeze({
      name: options.name,
      description: options.description ?? `Test tool ${options.name}`,
      source: options.source ?? 'custom',
      capability: normalizeCapability(options.capability ?? { writes: false, checkpointable: true }),
      ...(options.inputSchema === undefined ? {} : { inputSchema: options.inputSchema }),
      ...(options.outputSchema === undefined ? {} : { outputSchema: options.outputSchema }),
      ...(options.strictOutput === undefined ? {} : { strictOutput: options.strictOutput }),
      ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
    });
    if (options.stateless === true) {
      this.activate = undefined;
      this.deactivate = undefined;
    }
  }

  /** Calls of one type, optionally in one plan. */
  count(type: TestToolEvent['type'], planId?: string): number {
    return this.events.filter((event) => event.type === type && (planId === undefined || event.planId === planId)).length;
  }

  activate? = async (ctx: ToolExecutionContext): Promise<void> => {
    this.events.push({ type: 'activate', planId: ctx.planId });
    await this.options.activate?.(ctx);
  };

  async execute(input: I, ctx: ToolExecutionContext, options?: ToolCallOptions): Promise<ToolResult<O>> {
    this.events.push({ type: 'execute', planId: ctx.planId, ...(ctx.executionId === undefined ? {} : { executionId: ctx.executionId }), input });
    const produced = this.options.execute === undefined ? (input as unknown as O) : await this.options.execute(input, ctx, options);
    if (this.options.wrapOutput === false) return produced as ToolResult<O>;
    if (isToolResult(produced)) return produced;
    return this.options.changes === undefined ? { ok: true, output: produced as O } : { ok: true, output: produced as O, changes: this.options.changes };
  }

  deactivate? = async (ctx: ToolExecutionContext): Promise<void> => {
    this.events.push({ type: 'deactivate', planId: ctx.planId });
    await this.options.deactivate?.(ctx);
  };
}

function isToolResult(value: unknown): value is ToolResult {
  return (
    typeof value === 'object' &&
    value !== null &&
    ((value as { ok?: unknown }).ok === true || (value as { ok?: unknown }).ok === false) &&
    ('output' in value || 'error' in value)
  );
}
