import { randomUUID } from 'node:crypto';
import { freezeResources, type BoundResource } from './bound-resource';
import { CancellationToken } from './cancellation-token';
import { freezeChange, type Change } from './change';
import { ContextValidationError } from './context-validation-error';
import { describeType } from './describe-type';
import { normalizePlanPolicy, type PlanPolicy } from './plan-policy';
import { freezeTrace, type ToolExecutionTrace } from './tool-execution-trace';

/**
 * Everything a tool execution may know about its plan: id, policy, bound
 * resources, cancellation, and the plan's records of changes and traces.
 *
 * The plan's context is made by {@link createExecutionContext}; the runtime
 * hands each execution a view from {@link ToolExecutionContext.forExecution}
 * that shares the plan's records but has its own execution id, tool name and
 * token.
 */
export interface ToolExecutionContext {
  /** The plan's id. */
  readonly planId: string;
  /** The plan's policy (frozen). */
  readonly policy: PlanPolicy;
  /** What the plan may touch (a frozen array of frozen resources). */
  readonly resources: readonly BoundResource[];
  /** Cancels the plan, or — on an execution's view — this execution. */
  readonly cancellationToken: CancellationToken;
  /** Set on the per-execution view given to a tool; undefined on the plan context. */
  readonly executionId?: string;
  /** Set on the per-execution view given to a tool; undefined on the plan context. */
  readonly toolName?: string;
  /** Free-form data about the plan (a frozen shallow copy of what was given). */
  readonly metadata: Readonly<Record<string, unknown>>;
  /**
   * The plan's changes in recording order: a live, read-only view (writing
   * through it throws a `TypeError`; the entries are frozen). Copy it
   * (`[...ctx.changes]`) before `structuredClone` or `postMessage`.
   */
  readonly changes: readonly Change[];
  /** The plan's traces in recording order: a live, read-only view like {@link ToolExecutionContext.changes}. */
  readonly traces: readonly ToolExecutionTrace[];
  /**
   * The bound resource with this id, or `undefined`.
   *
   * @throws Never.
   */
  getResource(id: string): BoundResource | undefined;
  /**
   * Appends a change to the plan's records (a frozen copy of its known fields).
   *
   * @throws {ContextValidationError} When `kind` is not a {@link ChangeKind}, `target`,
   *   `toolName` or `executionId` is not a non-empty string, `at` is not an
   *   ISO-8601 timestamp, or `resourceId`/`summary` has the wrong type.
   */
  recordChange(change: Change): void;
  /**
   * Appends a trace to the plan's records (a frozen copy of its known fields).
   *
   * @throws {ContextValidationError} When a field is missing or has the wrong
   *   type, or `planId` is not this context's plan.
   */
  recordTrace(trace: ToolExecutionTrace): void;
  /**
   * A view for one execution: same plan, same records (recording through the
   * view records into the plan), with its own `executionId`, `toolName` and
   * token — by default the token of the context it is called on. One small
   * allocation; nothing is copied.
   *
   * @throws {ContextValidationError} When `executionId` or `toolName` is not a
   *   non-empty string, or `cancellationToken` is not a token.
   */
  forExecution(options: ExecutionViewOptions): ToolExecutionContext;
}

/** Options of {@link ToolExecutionContext.forExecution}. */
export interface ExecutionViewOptions {
  /** Id of the execution (see `createExecutionId`). */
  readonly executionId: string;
  /** The tool being executed. */
  readonly toolName: string;
  /** The execution's token, e.g. `ctx.cancellationToken.child({ timeoutMs })`. */
  readonly cancellationToken?: CancellationToken;
}

/** Options of {@link createExecutionContext}; all optional. */
export interface ToolExecutionContextOptions {
  /** The plan's id; default a random UUID (`crypto.randomUUID()`). */
  readonly planId?: string;
  /** Default `{ readOnly: false, requireCheckpoint: false }`; missing fields are `false`. */
  readonly policy?: Partial<PlanPolicy>;
  /** What the plan may touch; default none. */
  readonly resources?: readonly BoundResource[];
  /** The plan's token; default a new one. */
  readonly cancellationToken?: CancellationToken;
  /**
   * An outside signal to follow: the plan's token is cancelled when it aborts.
   * With `cancellationToken` as well, the plan gets a child of that token
   * which also follows the signal. Dispose the plan's token when the plan ends
   * (`ctx.cancellationToken.dispose()`) so a long-lived signal does not keep
   * listeners.
   */
  readonly signal?: AbortSignal;
  /** Free-form data about the plan. */
  readonly metadata?: Record<string, unknown>;
}

/** What every view of one plan shares. */
interface PlanRecords {
  readonly planId: string;
  readonly policy: PlanPolicy;
  readonly resources: readonly BoundResource[];
  readonly resourcesById: ReadonlyMap<string, BoundResource>;
  readonly metadata: Readonly<Record<string, unknown>>;
  readonly changes: Change[];
  readonly traces: ToolExecutionTrace[];
  readonly changesView: readonly Change[];
  readonly tracesView: readonly ToolExecutionTrace[];
}

/**
 * Creates the context of a new plan, validating everything it is given.
 *
 * @example
 * const ctx = createExecutionContext({
 *   planId: 'plan-42',
 *   policy: { readOnly: true },
 *   resources: [resourceFromPath({ id: 'workspace', path: '/home/me/project', access: 'read' })],
 * });
 *
 * @throws {ContextValidationError} When `planId` is not a non-empty string; the
 *   policy has an unknown field or a non-boolean value; a resource lacks an
 *   `id` or `kind`, repeats an id, has a URI that is not absolute (no scheme)
 *   or an access other than `'read'`/`'write'`; `metadata` is not an object;
 *   `cancellationToken` or `signal` has the wrong type.
 */
export function createExecutionContext(options: ToolExecutionContextOptions = {}): ToolExecutionContext {
  if (typeof options !== 'object' || options === null) {
    throw new ContextValidationError({
      field: 'options',
      message: `createExecutionContext expects an options object (or nothing), got ${describeType(options)}.`,
    });
  }
  const planId = options.planId === undefined ? randomUUID() : options.planId;
  if (typeof planId !== 'string' || planId.trim().length === 0) {
    throw new ContextValidationError({
      field: 'planId',
      message: `expected a non-empty string such as "plan-42", got ${describeType(planId)}; leave it out to get a random UUID.`,
    });
  }
  const policy = normalizePlanPolicy(options.policy, planId);
  const resources = freezeResources(options.resources, planId);
  const metadata = options.metadata;
  if (metadata !== undefined && (typeof metadata !== 'object' || metadata === null || Array.isArray(metadata))) {
    throw new ContextValidationError({
      field: 'metadata',
      planId,
      message: `expected a plain object, got ${describeType(metadata)}.`,
    });
  }
  if (options.cancellationToken !== undefined) checkToken(options.cancellationToken, 'cancellationToken', planId);
  const cancellationToken = makePlanToken(options.cancellationToken, options.signal, planId);

  const changes: Change[] = [];
  const traces: ToolExecutionTrace[] = [];
  const records: PlanRecords = {
    planId,
    policy,
    resources,
    resourcesById: new Map(resources.map((resource) => [resource.id, resource])),
    metadata: Object.freeze({ ...metadata }),
    changes,
    traces,
    changesView: readOnlyView(changes, 'ctx.changes', 'ctx.recordChange()'),
    tracesView: readOnlyView(traces, 'ctx.traces', 'ctx.recordTrace()'),
  };
  return new ExecutionContext(records, cancellationToken, undefined, undefined);
}

class ExecutionContext implements ToolExecutionContext {
  readonly planId: string;
  readonly policy: PlanPolicy;
  readonly resources: readonly BoundResource[];
  readonly cancellationToken: CancellationToken;
  readonly executionId: string | undefined;
  readonly toolName: string | undefined;
  readonly metadata: Readonly<Record<string, unknown>>;
  readonly changes: readonly Change[];
  readonly traces: readonly ToolExecutionTrace[];
  readonly #records: PlanRecords;

  constructor(
    records: PlanRecords,
    cancellationToken: CancellationToken,
    executionId: string | undefined,
    toolName: string | undefined,
  ) {
    this.planId = records.planId;
    this.policy = records.policy;
    this.resources = records.resources;
    this.cancellationToken = cancellationToken;
    this.executionId = executionId;
    this.toolName = toolName;
    this.metadata = records.metadata;
    this.changes = records.changesView;
    this.traces = records.tracesView;
    this.#records = records;
  }

  getResource(id: string): BoundResource | undefined {
    return this.#records.resourcesById.get(id);
  }

  recordChange(change: Change): void {
    this.#records.changes.push(freezeChange(change, this.planId));
  }

  recordTrace(trace: ToolExecutionTrace): void {
    this.#records.traces.push(freezeTrace(trace, this.planId));
  }

  forExecution(options: ExecutionViewOptions): ToolExecutionContext {
    if (typeof options !== 'object' || options === null) {
      throw new ContextValidationError({
        field: 'options',
        planId: this.planId,
        message: `forExecution expects { executionId, toolName, cancellationToken? }, got ${describeType(options)}.`,
      });
    }
    const { executionId, toolName, cancellationToken } = options;
    if (typeof executionId !== 'string' || executionId.length === 0) {
      throw new ContextValidationError({
        field: 'executionId',
        planId: this.planId,
        message: `expected a non-empty string (see createExecutionId()), got ${describeType(executionId)}.`,
      });
    }
    if (typeof toolName !== 'string' || toolName.length === 0) {
      throw new ContextValidationError({
        field: 'toolName',
        planId: this.planId,
        message: `expected the name of the tool being executed, got ${describeType(toolName)}.`,
      });
    }
    if (cancellationToken !== undefined) checkToken(cancellationToken, 'cancellationToken', this.planId);
    return new ExecutionContext(this.#records, cancellationToken ?? this.cancellationToken, executionId, toolName);
  }
}

function makePlanToken(token: CancellationToken | undefined, signal: unknown, planId: string): CancellationToken {
  if (signal === undefined) return token ?? new CancellationToken();
  try {
    return new CancellationToken({ signal: signal as AbortSignal, parent: token });
  } catch (error) {
    if (ContextValidationError.isInstance(error)) {
      throw new ContextValidationError({ field: error.field, planId, message: `expected an AbortSignal, got ${describeType(signal)}.` });
    }
    throw error;
  }
}

function checkToken(token: unknown, field: string, planId: string): void {
  if (token instanceof CancellationToken) return;
  // A token from another installed copy of this package works through its public methods.
  const candidate = token as Record<string, unknown> | null;
  if (
    typeof candidate === 'object' &&
    candidate !== null &&
    typeof candidate['check'] === 'function' &&
    typeof candidate['onCancel'] === 'function' &&
    typeof candidate['child'] === 'function' &&
    typeof candidate['isCancelled'] === 'boolean'
  ) {
    return;
  }
  throw new ContextValidationError({
    field,
    planId,
    message: `expected a CancellationToken (new CancellationToken() or ctx.cancellationToken.child()), got ${describeType(token)}.`,
  });
}

function readOnlyView<T>(target: T[], name: string, recorder: string): readonly T[] {
  const refuse = (): never => {
    throw new TypeError(`${name} is a read-only view of the plan's records; record through ${recorder}.`);
  };
  return new Proxy(target, {
    set: refuse,
    defineProperty: refuse,
    deleteProperty: refuse,
    setPrototypeOf: refuse,
    preventExtensions: refuse,
  });
}
