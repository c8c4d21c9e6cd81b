import { randomUUID } from 'node:crypto';
import { freezeResources, type BoundResource } from './bound-resource';
import { CancellationToken } from './cancellation-token';
import { freezeChange, type Change, type ChangeInput } from './change';
import { ContextValidationError } from './context-validation-error';
import { describeType } from './describe-type';
import { normalizePlanPolicy, type PlanPolicy } from './plan-policy';
import { freezeTrace, type ToolExecutionTrace } from './tool-execution-trace';

/**
 * What a tool sees of its plan: ids, policy, bound resources, cancellation,
 * the plan's changes (read-only) and one way to report a change.
 *
 * The runtime hands each execution (and each `activate`/`deactivate`) a view
 * made by {@link PlanContext.forExecution}; the view cannot record traces or
 * make further views — those stay with the holder of the {@link PlanContext}.
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
  /** The token's `AbortSignal` (`cancellationToken.signal`): pass it to `fetch`, child processes, streams. */
  readonly signal: AbortSignal;
  /** Set on the view given to an execution; undefined on the plan context and on activation views. */
  readonly executionId?: string;
  /** Set on the view given to a tool; undefined on the plan context. */
  readonly toolName?: string;
  /**
   * Set on the view given to an execution: the key that identifies this
   * call — its plan, tool, canonical arguments and step — so that an effect
   * happens once. The same on every retry of the call and when a plan
   * restarted with the same id makes the same call again; send it where the
   * effect happens (an `Idempotency-Key` header, an MCP request's `_meta`).
   * Computed on first read (it hashes the arguments): read it before
   * changing the input, if the tool ever does. Undefined on the plan context
   * and on activation views.
   */
  readonly idempotencyKey?: string;
  /** Free-form data about the plan (a frozen shallow copy of what was given). */
  readonly metadata: Readonly<Record<string, unknown>>;
  /**
   * The plan's changes in recording order: a live, read-only view (writing
   * through it throws a `TypeError`; the entries are frozen). Copy it
   * (`[...ctx.changes]`) before `structuredClone` or `postMessage`.
   */
  readonly changes: readonly Change[];
  /**
   * The bound resource with this id, or `undefined`.
   *
   * @throws Never.
   */
  getResource(id: string): BoundResource | undefined;
  /**
   * Reports a change the tool made, at the moment it made it, so that it is
   * kept for rollback even when the tool then fails or is cancelled. On an
   * execution's view the change is attributed to the view's tool and
   * execution (whatever the input says) and stamped with the time when `at`
   * is absent. Changes may also be returned in the result's `changes`; both
   * end up in the plan's records the same way.
   *
   * @throws {ContextValidationError} When the change is invalid (see
   *   {@link PlanContext.recordChange}), or when the view belongs to no
   *   execution (an activation view), which has nothing to attribute it to.
   */
  reportChange(change: ChangeInput): void;
}

/**
 * The context of a plan, as the service that runs the plan holds it: what a
 * tool sees, plus the plan's traces, the recording of changes and traces,
 * and the factory of the views handed to tools. Made by
 * {@link createExecutionContext} (or `runtime.createPlan()`); never given to
 * a tool.
 */
export interface PlanContext extends ToolExecutionContext {
  /** The plan's traces in recording order: a live, read-only view like {@link ToolExecutionContext.changes}. */
  readonly traces: readonly ToolExecutionTrace[];
  /**
   * Appends a change to the plan's records (a frozen copy of its known fields).
   *
   * @throws {ContextValidationError} When `kind` is not a {@link ChangeKind}, `target`,
   *   `toolName` or `executionId` is not a non-empty string, `at` is not an
   *   ISO-8601 timestamp, or `resourceId`/`summary` has the wrong type.
   */
  recordChange(change: Change): void;
  /**
   * On the plan context, the same as {@link PlanContext.recordChange} with `at`
   * defaulting to now: the plan context belongs to no tool, so the change must
   * name its `toolName` and `executionId`.
   *
   * @throws {ContextValidationError} As {@link PlanContext.recordChange}.
   */
  reportChange(change: ChangeInput | Change): void;
  /**
   * Appends a trace to the plan's records (a frozen copy of its known fields).
   *
   * @throws {ContextValidationError} When a field is missing or has the wrong
   *   type, or `planId` is not this context's plan.
   */
  recordTrace(trace: ToolExecutionTrace): void;
  /**
   * The view handed to a tool: same plan, same records, with its own
   * `toolName`, `executionId` (absent for `activate`/`deactivate`) and token
   * — by default the plan's. One small allocation; nothing is copied.
   *
   * @throws {ContextValidationError} When `toolName` is not a non-empty
   *   string, `executionId` is given but is not one, or `cancellationToken`
   *   is not a token.
   */
  forExecution(options: ExecutionViewOptions): ToolExecutionContext;
}

/** Options of {@link PlanContext.forExecution}. */
export interface ExecutionViewOptions {
  /** Id of the execution (see `createExecutionId`); absent for an activation or deactivation view. */
  readonly executionId?: string;
  /** The tool the view is for. */
  readonly toolName: string;
  /** The execution's token, e.g. `ctx.cancellationToken.child({ timeoutMs })`. */
  readonly cancellationToken?: CancellationToken;
  /**
   * The execution's idempotency key (see {@link ToolExecutionContext.idempotencyKey}),
   * or a function that computes it on the view's first read of it (its
   * answer is kept). Only with `executionId`.
   */
  readonly idempotencyKey?: string | (() => string);
}

/** Options of {@link createExecutionContext}; all optional. */
export interface ToolExecutionContextOptions {
  /** The plan's id; default a random UUID (`crypto.randomUUID()`). */
  readonly planId?: string;
  /** Default `{ readOnly: false, requireCheckpoint: false, network: 'allow' }`; missing booleans are `false`, a missing `network` is `'allow'`. */
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
export function createExecutionContext(options: ToolExecutionContextOptions = {}): PlanContext {
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
  return new PlanExecutionContext(records, cancellationToken);
}

class PlanExecutionContext implements PlanContext {
  readonly planId: string;
  readonly policy: PlanPolicy;
  readonly resources: readonly BoundResource[];
  readonly cancellationToken: CancellationToken;
  readonly executionId: undefined;
  readonly toolName: undefined;
  readonly idempotencyKey: undefined;
  readonly metadata: Readonly<Record<string, unknown>>;
  readonly changes: readonly Change[];
  readonly traces: readonly ToolExecutionTrace[];
  readonly #records: PlanRecords;

  constructor(records: PlanRecords, cancellationToken: CancellationToken) {
    this.planId = records.planId;
    this.policy = records.policy;
    this.resources = records.resources;
    this.cancellationToken = cancellationToken;
    this.metadata = records.metadata;
    this.changes = records.changesView;
    this.traces = records.tracesView;
    this.#records = records;
  }

  get signal(): AbortSignal {
    return this.cancellationToken.signal;
  }

  getResource(id: string): BoundResource | undefined {
    return this.#records.resourcesById.get(id);
  }

  recordChange(change: Change): void {
    this.#records.changes.push(freezeChange(change, this.planId));
  }

  reportChange(change: ChangeInput | Change): void {
    const given = change as Partial<Change> | null;
    const at = typeof given === 'object' && given !== null && given.at === undefined ? new Date().toISOString() : undefined;
    this.recordChange((at === undefined ? change : { ...change, at }) as Change);
  }

  recordTrace(trace: ToolExecutionTrace): void {
    this.#records.traces.push(freezeTrace(trace, this.planId));
  }

  forExecution(options: ExecutionViewOptions): ToolExecutionContext {
    if (typeof options !== 'object' || options === null) {
      throw new ContextValidationError({
        field: 'options',
        planId: this.planId,
        message: `forExecution expects { toolName, executionId?, cancellationToken? }, got ${describeType(options)}.`,
      });
    }
    const { executionId, toolName, cancellationToken, idempotencyKey } = options;
    if (executionId !== undefined && (typeof executionId !== 'string' || executionId.length === 0)) {
      throw new ContextValidationError({
        field: 'executionId',
        planId: this.planId,
        message: `expected a non-empty string (see createExecutionId()) or nothing, got ${describeType(executionId)}.`,
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
    if (idempotencyKey !== undefined) {
      if (executionId === undefined) {
        throw new ContextValidationError({
          field: 'idempotencyKey',
          planId: this.planId,
          message: 'an idempotency key belongs to an execution; give the executionId as well (activation views have none).',
        });
      }
      if (!(typeof idempotencyKey === 'function' || (typeof idempotencyKey === 'string' && idempotencyKey.length > 0))) {
        throw new ContextValidationError({
          field: 'idempotencyKey',
          planId: this.planId,
          message: `expected a non-empty string or a function that returns one, got ${describeType(idempotencyKey)}.`,
        });
      }
    }
    return new ToolView(this.#records, cancellationToken ?? this.cancellationToken, executionId, toolName, idempotencyKey);
  }
}

/** What a tool gets: no traces, no recording of someone else's changes, no further views. */
class ToolView implements ToolExecutionContext {
  readonly planId: string;
  readonly policy: PlanPolicy;
  readonly resources: readonly BoundResource[];
  readonly cancellationToken: CancellationToken;
  readonly executionId: string | undefined;
  readonly toolName: string;
  readonly metadata: Readonly<Record<string, unknown>>;
  readonly changes: readonly Change[];
  readonly #records: PlanRecords;
  #idempotencyKey: string | (() => string) | undefined;

  constructor(
    records: PlanRecords,
    cancellationToken: CancellationToken,
    executionId: string | undefined,
    toolName: string,
    idempotencyKey: string | (() => string) | undefined,
  ) {
    this.planId = records.planId;
    this.policy = records.policy;
    this.resources = records.resources;
    this.cancellationToken = cancellationToken;
    this.executionId = executionId;
    this.toolName = toolName;
    this.metadata = records.metadata;
    this.changes = records.changesView;
    this.#records = records;
    this.#idempotencyKey = idempotencyKey;
  }

  get signal(): AbortSignal {
    return this.cancellationToken.signal;
  }

  get idempotencyKey(): string | undefined {
    const key = this.#idempotencyKey;
    if (typeof key !== 'function') return key;
    const computed = key();
    this.#idempotencyKey = computed;
    return computed;
  }

  getResource(id: string): BoundResource | undefined {
    return this.#records.resourcesById.get(id);
  }

  reportChange(change: ChangeInput): void {
    if (this.executionId === undefined) {
      throw new ContextValidationError({
        field: 'executionId',
        planId: this.planId,
        message: `tool "${this.toolName}" reported a change outside an execution (during activate or deactivate); report changes from execute(), where they can be attributed.`,
      });
    }
    if (typeof change !== 'object' || change === null || Array.isArray(change)) {
      throw new ContextValidationError({
        field: 'change',
        planId: this.planId,
        message: `reportChange expects { kind, target, resourceId?, summary?, undo?, at? }, got ${describeType(change)}.`,
      });
    }
    const at = change.at ?? new Date().toISOString();
    this.#records.changes.push(freezeChange({ ...change, toolName: this.toolName, executionId: this.executionId, at }, this.planId));
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
