import { asClause, normalizeCapability, type JsonSchema, type ToolCapabilityInput } from '@ca/domain';
import { PathConfinementError, type ChangeInput, type ToolExecutionContext } from '@ca/tool-context';
import { toolFailure, type ToolDescriptor, type ToolInstance, type ToolResult, type ToolSandboxing } from '@ca/tool-lifecycle';
import type { ResolvedSettings } from './builtin-adapter-settings';
import { BuiltinToolError, type BuiltinToolErrorCode } from './builtin-tool-error';
import { guardPath, toBuiltinError, type GuardRequest, type GuardedPath } from './resource-paths';
import type { UndoStore } from './undo-store';

/** Everything one execution of a built-in tool works with. */
export class ToolCall {
  /** Changes made so far; attached to the result, also a failed one. */
  readonly changes: ChangeInput[] = [];
  readonly planId: string;

  constructor(
    readonly toolName: string,
    readonly ctx: ToolExecutionContext,
    readonly settings: ResolvedSettings,
    readonly undo: UndoStore,
  ) {
    this.planId = ctx.planId;
  }

  /** `Tool "x" in plan "p"`, to start messages. */
  get where(): string {
    return `Tool "${this.toolName}" in plan "${this.planId}"`;
  }

  /** An expected failure of this call; `retry` marks one the same call may get past when made again. */
  fail(
    code: BuiltinToolErrorCode,
    message: string,
    target?: string,
    cause?: unknown,
    retry?: { readonly retryable: true; readonly retryAfterMs?: number },
  ): BuiltinToolError {
    return new BuiltinToolError({
      code,
      message: `${this.where} ${message}`,
      toolName: this.toolName,
      planId: this.planId,
      ...(target === undefined ? {} : { target }),
      ...(cause === undefined ? {} : { cause }),
      ...retry,
    });
  }

  /** Confines a path to the plan's resources (see `guardPath`). */
  guard(request: Omit<GuardRequest, 'toolName'>): Promise<GuardedPath> {
    return guardPath(this.ctx, { ...request, toolName: this.toolName });
  }

  /** Throws `ToolCancelledError` when the execution was cancelled. */
  checkCancelled(): void {
    this.ctx.cancellationToken.check({ toolName: this.toolName, planId: this.planId });
  }
}

/** One built-in tool: its metadata and what it does. */
export interface BuiltinToolSpec {
  readonly name: string;
  readonly description: string;
  readonly capability: ToolCapabilityInput;
  readonly inputSchema: JsonSchema;
  readonly outputSchema: JsonSchema;
  /** The tool keeps undo backups: its deactivation removes the plan's backup folder. */
  readonly keepsUndoData?: boolean;
  /**
   * The tool's programs run in the kernel sandbox when it is on (the command
   * tool): its description then, and whether it records an overlay's changes
   * in a checkpoint plan. The capability stays the one above — what it can do
   * in a plain plan — and the runtime derives the rest from the plan
   * (`capabilityInPlan`).
   */
  readonly sandboxed?: { readonly description: string } & ToolSandboxing;
  /** Checks, once per plan, what the tool needs before it runs (the command tool: a required sandbox). */
  activate?(ctx: ToolExecutionContext, settings: ResolvedSettings): Promise<void>;
  /** Runs the tool; throws `BuiltinToolError` for expected failures, which become failed results. */
  run(input: Record<string, unknown>, call: ToolCall): Promise<ToolResult>;
}

/** Marks a schema as draft 2020-12. */
export function schema(body: Record<string, unknown>): JsonSchema {
  return Object.freeze({ $schema: 'https://json-schema.org/draft/2020-12/schema', ...body });
}

/** The `ToolInstance` of a {@link BuiltinToolSpec}. */
export class BuiltinTool implements ToolInstance {
  #descriptor: ToolDescriptor;

  constructor(
    private readonly spec: BuiltinToolSpec,
    private readonly settings: ResolvedSettings,
    private readonly undo: UndoStore,
  ) {
    this.#descriptor = describe(spec, spec.description, undefined);
    if (spec.keepsUndoData === true) {
      this.deactivate = (ctx: ToolExecutionContext) => this.undo.release(ctx.planId);
    }
    if (spec.activate !== undefined) {
      const activate = spec.activate;
      this.activate = (ctx: ToolExecutionContext) => activate(ctx, settings);
    }
  }

  get descriptor(): ToolDescriptor {
    return this.#descriptor;
  }

  /**
   * Describes the tool as it runs with the kernel sandbox on or off; known
   * once the sandbox was probed. A sandbox whose settings take the network
   * away (`network: false`) makes the tool closed-world in every plan.
   */
  useSandbox(sandboxed: boolean, network = true): void {
    const variant = sandboxed ? this.spec.sandboxed : undefined;
    this.#descriptor =
      variant === undefined
        ? describe(this.spec, this.spec.description, undefined)
        : describe(this.spec, variant.description, { overlay: variant.overlay }, network ? undefined : { openWorld: false });
  }

  /** See {@link BuiltinToolSpec.activate}. */
  activate?: (ctx: ToolExecutionContext) => Promise<void>;

  /** Removes the plan's undo backups (write tools only); rollback is no longer possible for large files afterwards. */
  deactivate?: (ctx: ToolExecutionContext) => Promise<void>;

  async execute(input: unknown, ctx: ToolExecutionContext): Promise<ToolResult> {
    const call = new ToolCall(this.spec.name, ctx, this.settings, this.undo);
    let result: ToolResult;
    try {
      if (typeof input !== 'object' || input === null || Array.isArray(input)) {
        throw call.fail('BUILTIN_INVALID_INPUT', 'expects an object as input; see its inputSchema.');
      }
      result = await this.spec.run(input as Record<string, unknown>, call);
    } catch (error) {
      const failure = asExpectedFailure(error, call);
      if (failure === undefined) {
        deliverChanges(call);
        throw error;
      }
      result = toolFailure(failure);
    }
    return deliverChanges(call, result);
  }
}

function describe(spec: BuiltinToolSpec, description: string, sandboxed: ToolSandboxing | undefined, change?: ToolCapabilityInput): ToolDescriptor {
  return Object.freeze({
    name: spec.name,
    description,
    source: 'builtin',
    capability: normalizeCapability({ ...spec.capability, ...change }),
    inputSchema: spec.inputSchema,
    outputSchema: spec.outputSchema,
    ...(sandboxed === undefined ? {} : { sandboxed: Object.freeze(sandboxed) }),
  });
}

/**
 * Attaches the call's changes to its result. When the tool throws there is no
 * result to carry them (the runtime turns the throw into ToolExecutionError),
 * so they are reported through the context, which attributes them like the
 * runtime does; otherwise they would be lost to rollback. A result that
 * arrives after cancellation still reaches the runtime, which records its changes.
 */
function deliverChanges(call: ToolCall, result?: ToolResult): ToolResult {
  const changes = call.changes;
  if (result === undefined) {
    for (const change of changes) call.ctx.reportChange(change);
    return toolFailure(call.fail('BUILTIN_IO_FAILED', 'was interrupted.'));
  }
  return changes.length === 0 ? result : { ...result, changes: [...(result.changes ?? []), ...changes] };
}

const NOT_FOUND = new Set(['ENOENT']);
const WRONG_TYPE = new Set(['EISDIR', 'ENOTDIR', 'ENOTEMPTY']);

function asExpectedFailure(error: unknown, call: ToolCall): BuiltinToolError | undefined {
  if (BuiltinToolError.isInstance(error)) return error;
  if (PathConfinementError.isInstance(error)) return toBuiltinError(error);
  const system = error as NodeJS.ErrnoException | null;
  if (typeof system?.code !== 'string' || !/^E[A-Z]+$/.test(system.code)) return undefined;
  const target = typeof system.path === 'string' ? system.path : undefined;
  const code: BuiltinToolErrorCode = NOT_FOUND.has(system.code)
    ? 'BUILTIN_NOT_FOUND'
    : WRONG_TYPE.has(system.code)
      ? 'BUILTIN_WRONG_TYPE'
      : system.code === 'EEXIST'
        ? 'BUILTIN_ALREADY_EXISTS'
        : 'BUILTIN_IO_FAILED';
  const hint =
    code === 'BUILTIN_NOT_FOUND'
      ? 'Check the path (builtin.fs.list or builtin.fs.glob show what exists).'
      : code === 'BUILTIN_WRONG_TYPE'
        ? 'The path is a folder where a file was expected, or the other way round.'
        : 'Check permissions and free space.';
  return call.fail(code, `failed${target === undefined ? '' : ` on "${target}"`}: ${asClause(system.message)}. ${hint}`, target, error);
}
