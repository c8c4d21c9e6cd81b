import { ContextValidationError } from './context-validation-error';
import { describeType } from './describe-type';
import { ToolCancelledError } from './tool-cancelled-error';

/** Longest delay `setTimeout` honours (2^31 - 1 ms, about 24.8 days). */
const MAX_TIMER_DELAY_MS = 2_147_483_647;

/** Options of `new CancellationToken(options)`. */
export interface CancellationTokenOptions {
  /**
   * Follow an outside signal: the token is cancelled when it aborts (at once if
   * it already has), with a reason taken from `signal.reason`. The listener is
   * removed by {@link CancellationToken.dispose} and on cancellation.
   */
  readonly signal?: AbortSignal;
  /**
   * Cancel the token after this many milliseconds, with the reason
   * `'timed out after N ms'` (or {@link CancellationTokenOptions.timeoutReason}).
   * `Infinity`, and values above 2^31 - 1 (about 24.8 days, the longest delay
   * `setTimeout` honours), mean no deadline.
   */
  readonly timeoutMs?: number;
  /** Reason used when `timeoutMs` elapses, instead of `'timed out after N ms'`. */
  readonly timeoutReason?: string;
  /**
   * Follow a parent token, as {@link CancellationToken.child} does. A token from
   * another installed copy of this package is followed through its `onCancel`.
   */
  readonly parent?: CancellationToken;
}

/** Options of {@link CancellationToken.child}. */
export interface CancellationTokenChildOptions {
  /** A deadline for the child: it is cancelled after this many milliseconds (see {@link CancellationTokenOptions.timeoutMs}). */
  readonly timeoutMs?: number;
  /** Reason used when `timeoutMs` elapses, instead of `'timed out after N ms'`. */
  readonly reason?: string;
}

/** Details added to the {@link ToolCancelledError} thrown by {@link CancellationToken.check}. */
export interface CancellationCheckDetails {
  /** The tool about to run. */
  readonly toolName?: string;
  /** The plan the tool runs in. */
  readonly planId?: string;
}

interface CallbackNode {
  callback: ((reason: string) => void) | undefined;
  previous: CallbackNode | undefined;
  next: CallbackNode | undefined;
  linked: boolean;
}

/** Listener counts of a token, for tests that look for leaks. */
export interface CancellationListenerCounts {
  /** Registered, not yet called or removed `onCancel` callbacks. */
  readonly callbacks: number;
  /** Attached, not yet disposed or cancelled children. */
  readonly children: number;
}

let readListenerCounts: (token: CancellationToken) => CancellationListenerCounts;
let noneToken: CancellationToken | undefined;

const noop = (): void => undefined;

/**
 * Cooperative cancellation for a plan or one tool execution.
 *
 * - {@link CancellationToken.cancel} is idempotent: the first reason wins.
 * - {@link CancellationToken.signal} is an `AbortSignal` (created on first
 *   read) for `fetch`, `child_process`, `events.once`, streams and the MCP SDK;
 *   its `reason` is a {@link ToolCancelledError}.
 * - {@link CancellationToken.child} makes a token that follows this one, with
 *   an optional deadline. Parent-to-child propagation uses the tokens' own
 *   listener lists, not `addEventListener`, so children are cheap and leave
 *   nothing on the parent's signal.
 *
 * On cancellation, in this order: the token stops following its parent,
 * outside signal and timer; its children are cancelled (depth first, with the
 * same reason); its signal aborts; its `onCancel` callbacks run in
 * registration order. A callback that throws does not stop the others; its
 * error is rethrown from `cancel()` once all have run (an `AggregateError`
 * when several threw).
 */
export class CancellationToken {
  #cancelled = false;
  #reason: string | undefined = undefined;
  #disposed = false;
  #neverCancelled = false;
  #controller: AbortController | undefined = undefined;

  #firstCallback: CallbackNode | undefined = undefined;
  #lastCallback: CallbackNode | undefined = undefined;
  #callbackCount = 0;

  #parent: CancellationToken | undefined = undefined;
  #previousSibling: CancellationToken | undefined = undefined;
  #nextSibling: CancellationToken | undefined = undefined;
  #firstChild: CancellationToken | undefined = undefined;
  #lastChild: CancellationToken | undefined = undefined;
  #childCount = 0;

  #unfollowForeignParent: (() => void) | undefined = undefined;
  #outsideSignal: AbortSignal | undefined = undefined;
  #outsideListener: (() => void) | undefined = undefined;
  #timer: ReturnType<typeof setTimeout> | undefined = undefined;

  static {
    readListenerCounts = (token) => ({ callbacks: token.#callbackCount, children: token.#childCount });
  }

  /**
   * @param options - An outside signal, a deadline and/or a parent to follow; all optional.
   * @throws {ContextValidationError} When an option has the wrong type: `signal`
   *   not an `AbortSignal`, `timeoutMs` not a number ≥ 0, `parent` not a token.
   */
  constructor(options?: CancellationTokenOptions) {
    if (options === undefined) return;
    if (typeof options !== 'object' || options === null) {
      throw new ContextValidationError({
        field: 'options',
        message: `expected an object like { signal, timeoutMs, parent }, got ${describeType(options)}.`,
      });
    }
    const { signal, timeoutMs, timeoutReason, parent } = options;
    if (signal !== undefined && !isAbortSignalLike(signal)) {
      throw new ContextValidationError({
        field: 'signal',
        message: `expected an AbortSignal (e.g. new AbortController().signal), got ${describeType(signal)}.`,
      });
    }
    if (parent !== undefined && !(isCancellationToken(parent) || isForeignToken(parent))) {
      throw new ContextValidationError({
        field: 'parent',
        message: `expected a CancellationToken, got ${describeType(parent)}.`,
      });
    }
    validateTimeout(timeoutMs, timeoutReason);

    if (parent !== undefined) this.#followParent(parent);
    if (signal !== undefined && !this.#cancelled) this.#followSignal(signal);
    if (timeoutMs !== undefined && !this.#cancelled) this.#startTimer(timeoutMs, timeoutReason);
  }

  /**
   * The shared token that is never cancelled: for callers with nothing to
   * cancel. Its `onCancel` stores nothing, its children follow nothing (they can
   * still time out or be cancelled themselves), and `dispose()` does nothing.
   *
   * @throws Never. (Calling `cancel()` on it throws; see {@link CancellationToken.cancel}.)
   */
  static none(): CancellationToken {
    if (noneToken === undefined) {
      noneToken = new CancellationToken();
      noneToken.#neverCancelled = true;
    }
    return noneToken;
  }

  /** True once the token has been cancelled. Never goes back to false. */
  get isCancelled(): boolean {
    return this.#cancelled;
  }

  /** Why the token was cancelled (the first reason given); `undefined` while not cancelled. */
  get reason(): string | undefined {
    return this.#reason;
  }

  /**
   * An `AbortSignal` that aborts when the token is cancelled, with a
   * {@link ToolCancelledError} as `signal.reason`. Created on first read (so
   * tokens whose signal nobody reads cost no `AbortController`); already
   * aborted when read after cancellation. Always the same signal per token.
   *
   * @throws Never.
   */
  get signal(): AbortSignal {
    let controller = this.#controller;
    if (controller === undefined) {
      controller = this.#controller = new AbortController();
      if (this.#cancelled) controller.abort(new ToolCancelledError({ reason: this.#reason }));
    }
    return controller.signal;
  }

  /**
   * Cancels the token and, through it, its children. Idempotent: once
   * cancelled, later calls do nothing and the first reason stays.
   *
   * @param reason - Why, e.g. `'cancelled by user'`; default `'cancelled'`. A
   *   non-string (an `Error`, say) is turned into text.
   * @throws {TypeError} On {@link CancellationToken.none}, which is shared and
   *   cannot be cancelled: create your own token instead.
   * @throws The error of an `onCancel` callback (of this token or a
   *   descendant) that threw, after every callback has run; an `AggregateError`
   *   when several threw.
   */
  cancel(reason?: string): void {
    if (this.#neverCancelled) {
      throw new TypeError(
        'CancellationToken.none() is shared and cannot be cancelled; create a token with new CancellationToken() ' +
          '(or token.child()) for work you want to cancel.',
      );
    }
    if (this.#cancelled) return;
    this.#settle(describeReason(reason, 'cancelled'));
  }

  /**
   * Throws if the token has been cancelled; otherwise does nothing. Call it
   * before starting work and between steps of long work.
   *
   * @param details - Tool and plan to name in the error.
   * @throws {ToolCancelledError} When cancelled, carrying {@link CancellationToken.reason}
   *   and the given tool and plan.
   */
  check(details?: CancellationCheckDetails): void {
    if (!this.#cancelled) return;
    throw new ToolCancelledError({ reason: this.#reason, toolName: details?.toolName, planId: details?.planId });
  }

  /**
   * Calls `callback(reason)` once when the token is cancelled, synchronously
   * inside `cancel()`; at once if it already is.
   *
   * @returns A function that removes the callback (idempotent). Call it when the
   *   work settles, so long-lived tokens do not collect callbacks.
   * @throws {ContextValidationError} When `callback` is not a function.
   * @throws Whatever `callback` throws, when the token is already cancelled.
   */
  onCancel(callback: (reason: string) => void): () => void {
    if (typeof callback !== 'function') {
      throw new ContextValidationError({
        field: 'callback',
        message: `onCancel expects a function (reason: string) => void, got ${describeType(callback)}.`,
      });
    }
    if (this.#cancelled) {
      callback(this.#reason as string);
      return noop;
    }
    if (this.#neverCancelled) return noop;
    const node: CallbackNode = { callback, previous: this.#lastCallback, next: undefined, linked: true };
    if (this.#lastCallback === undefined) this.#firstCallback = node;
    else this.#lastCallback.next = node;
    this.#lastCallback = node;
    this.#callbackCount++;
    return () => {
      if (node.callback === undefined) return;
      node.callback = undefined;
      if (!node.linked) return;
      node.linked = false;
      if (node.previous === undefined) this.#firstCallback = node.next;
      else node.previous.next = node.next;
      if (node.next === undefined) this.#lastCallback = node.previous;
      else node.next.previous = node.previous;
      node.previous = node.next = undefined;
      this.#callbackCount--;
    };
  }

  /**
   * A token that is cancelled when this one is (with the same reason), when
   * its own deadline elapses (reason `'timed out after N ms'`, or `reason`),
   * or when cancelled directly — which does not cancel this token. Born
   * cancelled if this token already is.
   *
   * Cheap without a deadline (no timer, no `AbortController`, no listener on
   * this token's signal). Call {@link CancellationToken.dispose} on the child
   * when its work is done, to detach it and clear its timer.
   *
   * @throws {ContextValidationError} When `timeoutMs` is not a number ≥ 0 or `reason` not a string.
   */
  child(options?: CancellationTokenChildOptions): CancellationToken {
    let timeoutMs: number | undefined;
    let timeoutReason: string | undefined;
    if (options !== undefined) {
      if (typeof options !== 'object' || options === null) {
        throw new ContextValidationError({
          field: 'options',
          message: `child() expects an object like { timeoutMs, reason }, got ${describeType(options)}.`,
        });
      }
      timeoutMs = options.timeoutMs;
      timeoutReason = options.reason;
      validateTimeout(timeoutMs, timeoutReason);
    }
    const token = new CancellationToken();
    if (this.#cancelled) {
      token.#cancelled = true;
      token.#reason = this.#reason;
      return token;
    }
    if (!this.#neverCancelled) token.#linkTo(this);
    if (timeoutMs !== undefined) token.#startTimer(timeoutMs, timeoutReason);
    return token;
  }

  /**
   * Stops following the parent and the outside signal, and clears the
   * deadline timer. Idempotent. The token keeps its state and can still be
   * cancelled directly; its own children and callbacks are untouched.
   *
   * @throws Never.
   */
  dispose(): void {
    if (this.#disposed || this.#neverCancelled) return;
    this.#disposed = true;
    this.#detach();
  }

  #linkTo(parent: CancellationToken): void {
    this.#parent = parent;
    this.#previousSibling = parent.#lastChild;
    if (parent.#lastChild === undefined) parent.#firstChild = this;
    else parent.#lastChild.#nextSibling = this;
    parent.#lastChild = this;
    parent.#childCount++;
  }

  #unlink(): void {
    const parent = this.#parent;
    if (parent === undefined) return;
    this.#parent = undefined;
    const previous = this.#previousSibling;
    const next = this.#nextSibling;
    if (previous === undefined) parent.#firstChild = next;
    else previous.#nextSibling = next;
    if (next === undefined) parent.#lastChild = previous;
    else next.#previousSibling = previous;
    this.#previousSibling = this.#nextSibling = undefined;
    parent.#childCount--;
  }

  #followParent(parent: CancellationToken): void {
    if (isCancellationToken(parent)) {
      if (parent.#cancelled) {
        this.#cancelled = true;
        this.#reason = parent.#reason;
      } else if (!parent.#neverCancelled) {
        this.#linkTo(parent);
      }
      return;
    }
    // A token from another copy of the package: its private state is out of reach.
    const foreign = parent as unknown as CancellationToken;
    if (foreign.isCancelled) {
      this.#cancelled = true;
      this.#reason = describeReason(foreign.reason, 'cancelled');
      return;
    }
    this.#unfollowForeignParent = foreign.onCancel((reason) => {
      this.#unfollowForeignParent = undefined;
      if (!this.#cancelled) this.#settle(describeReason(reason, 'cancelled'));
    });
  }

  #followSignal(signal: AbortSignal): void {
    if (signal.aborted) {
      this.#cancelled = true;
      this.#reason = describeAbortReason(signal.reason);
      return;
    }
    const listener = (): void => {
      this.#outsideSignal = undefined;
      this.#outsideListener = undefined;
      if (!this.#cancelled) this.#settle(describeAbortReason(signal.reason));
    };
    this.#outsideSignal = signal;
    this.#outsideListener = listener;
    signal.addEventListener('abort', listener, { once: true });
  }

  #startTimer(timeoutMs: number, timeoutReason: string | undefined): void {
    if (timeoutMs > MAX_TIMER_DELAY_MS) return;
    const reason = timeoutReason ?? `timed out after ${timeoutMs} ms`;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      if (!this.#cancelled) this.#settle(reason);
    }, timeoutMs);
  }

  #detach(): void {
    this.#unlink();
    const unfollow = this.#unfollowForeignParent;
    if (unfollow !== undefined) {
      this.#unfollowForeignParent = undefined;
      unfollow();
    }
    const signal = this.#outsideSignal;
    if (signal !== undefined) {
      signal.removeEventListener('abort', this.#outsideListener as () => void);
      this.#outsideSignal = undefined;
      this.#outsideListener = undefined;
    }
    if (this.#timer !== undefined) {
      clearTimeout(this.#timer);
      this.#timer = undefined;
    }
  }

  #settle(reason: string): void {
    this.#cancelled = true;
    this.#reason = reason;
    this.#detach();
    const errors: unknown[] = [];

    if (this.#firstChild !== undefined) {
      // Snapshot first: callbacks of one child may dispose or cancel its siblings.
      const children: CancellationToken[] = [];
      for (let child: CancellationToken | undefined = this.#firstChild; child !== undefined;) {
        const next: CancellationToken | undefined = child.#nextSibling;
        child.#parent = child.#previousSibling = child.#nextSibling = undefined;
        children.push(child);
        child = next;
      }
      this.#firstChild = this.#lastChild = undefined;
      this.#childCount = 0;
      for (const child of children) {
        if (child.#cancelled || child.#disposed) continue;
        try {
          child.#settle(reason);
        } catch (error) {
          errors.push(error);
        }
      }
    }

    const controller = this.#controller;
    if (controller !== undefined && !controller.signal.aborted) {
      controller.abort(new ToolCancelledError({ reason }));
    }

    if (this.#firstCallback !== undefined) {
      const nodes: CallbackNode[] = [];
      for (let node: CallbackNode | undefined = this.#firstCallback; node !== undefined; node = node.next) {
        node.linked = false;
        nodes.push(node);
      }
      for (const node of nodes) node.previous = node.next = undefined;
      this.#firstCallback = this.#lastCallback = undefined;
      this.#callbackCount = 0;
      for (const node of nodes) {
        const callback = node.callback;
        if (callback === undefined) continue;
        node.callback = undefined;
        try {
          callback(reason);
        } catch (error) {
          errors.push(error);
        }
      }
    }

    if (errors.length === 1) throw errors[0];
    if (errors.length > 1) {
      throw new AggregateError(errors, `${errors.length} cancellation callbacks threw while cancelling (reason: ${reason}).`);
    }
  }
}

/**
 * How many `onCancel` callbacks and children a token holds. Not part of the
 * public API (not exported from the package entry): for leak tests.
 *
 * @internal
 */
export function getCancellationListenerCounts(token: CancellationToken): CancellationListenerCounts {
  return readListenerCounts(token);
}

function isCancellationToken(value: unknown): value is CancellationToken {
  return value instanceof CancellationToken;
}

function isForeignToken(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return false;
  const candidate = value as Record<string, unknown>;
  return typeof candidate['onCancel'] === 'function' && typeof candidate['isCancelled'] === 'boolean';
}

function isAbortSignalLike(value: unknown): value is AbortSignal {
  if (typeof value !== 'object' || value === null) return false;
  const candidate = value as Record<string, unknown>;
  return (
    typeof candidate['aborted'] === 'boolean' && typeof candidate['addEventListener'] === 'function' && typeof candidate['removeEventListener'] === 'function'
  );
}

function validateTimeout(timeoutMs: unknown, timeoutReason: unknown): void {
  if (timeoutMs !== undefined && (typeof timeoutMs !== 'number' || Number.isNaN(timeoutMs) || timeoutMs < 0)) {
    throw new ContextValidationError({
      field: 'timeoutMs',
      message: `expected a number of milliseconds ≥ 0 (Infinity for no deadline), got ${describeType(timeoutMs)}.`,
    });
  }
  if (timeoutReason !== undefined && typeof timeoutReason !== 'string') {
    throw new ContextValidationError({
      field: 'reason',
      message: `expected a string to use as the timeout reason, got ${describeType(timeoutReason)}.`,
    });
  }
}

function describeReason(reason: unknown, fallback: string): string {
  if (typeof reason === 'string') return reason.length > 0 ? reason : fallback;
  if (reason === undefined || reason === null) return fallback;
  return describeAbortReason(reason);
}

/** Text of an `AbortSignal`'s `reason`: a cancellation's reason, an error's message, or a string. */
function describeAbortReason(reason: unknown): string {
  if (ToolCancelledError.isInstance(reason)) return reason.reason;
  if (typeof reason === 'string' && reason.length > 0) return reason;
  if (typeof reason === 'object' && reason !== null) {
    const message = (reason as { message?: unknown }).message;
    if (typeof message === 'string' && message.length > 0) return message;
  }
  return 'aborted';
}
