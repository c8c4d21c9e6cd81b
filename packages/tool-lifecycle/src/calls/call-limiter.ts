import { ToolCancelledError, type CancellationToken } from '@ca/tool-context';
import { ToolLimitExceededError } from '../errors';

/** The most calls at once and the most calls per interval, for one tool in one scope. */
export interface CallLimits {
  readonly maxConcurrent?: number;
  readonly rate?: { readonly calls: number; readonly perMs: number };
}

/** How a call over a limit behaves. */
export interface LimitWaitPolicy {
  readonly onLimit: 'wait' | 'fail';
  readonly maxWaitMs: number | undefined;
}

/** Who waits and for what, to build errors. */
export interface LimitSubject {
  readonly toolName: string;
  readonly planId: string;
  readonly token: CancellationToken;
}

interface Waiter {
  readonly grant: () => void;
}

/**
 * One tool's limits in one scope (a plan, or the runtime): a semaphore for
 * concurrent calls and a token bucket for the rate (`calls` per `perMs`, at
 * most `calls` at once after a quiet spell). Waiters are served first come,
 * first served; a waiter that gives up (cancelled, `maxWaitMs`) leaves the
 * queue.
 */
export class CallLimiter {
  private active = 0;
  private tokens: number;
  private refilledAt: number;
  private readonly queue: Waiter[] = [];
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly limits: CallLimits,
    private readonly scope: 'plan' | 'runtime',
    private readonly now: () => number,
  ) {
    this.tokens = limits.rate?.calls ?? 0;
    this.refilledAt = now();
  }

  /**
   * Takes a turn: resolves with the function that gives it back once the
   * call has settled (the rate's share is spent for good).
   * @throws ToolLimitExceededError (over a limit with `onLimit: 'fail'`, or after `maxWaitMs`), ToolCancelledError.
   */
  acquire(subject: LimitSubject, policy: LimitWaitPolicy): Promise<() => void> | (() => void) {
    if (this.queue.length === 0 && this.tryTake()) return this.releaser();
    if (policy.onLimit === 'fail') throw this.exceeded(subject, undefined);
    subject.token.check({ toolName: subject.toolName, planId: subject.planId });
    return new Promise<() => void>((resolve, reject) => {
      const started = this.now();
      let timer: ReturnType<typeof setTimeout> | undefined;
      const leave = (): void => {
        const index = this.queue.indexOf(waiter);
        if (index >= 0) this.queue.splice(index, 1);
        unsubscribe();
        if (timer !== undefined) clearTimeout(timer);
      };
      const waiter: Waiter = {
        grant: () => {
          unsubscribe();
          if (timer !== undefined) clearTimeout(timer);
          resolve(this.releaser());
        },
      };
      const unsubscribe = subject.token.onCancel((reason) => {
        leave();
        reject(new ToolCancelledError({ reason, toolName: subject.toolName, planId: subject.planId }));
        this.pump();
      });
      this.queue.push(waiter);
      if (policy.maxWaitMs !== undefined) {
        timer = setTimeout(() => {
          leave();
          reject(this.exceeded(subject, this.now() - started));
          this.pump();
        }, policy.maxWaitMs);
      }
      this.pump();
    });
  }

  private releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.active--;
      this.pump();
    };
  }

  /** Takes a slot and a rate token when both are free. */
  private tryTake(): boolean {
    const { maxConcurrent, rate } = this.limits;
    if (maxConcurrent !== undefined && this.active >= maxConcurrent) return false;
    if (rate !== undefined) {
      this.refill(rate);
      if (this.tokens < 1) return false;
      this.tokens -= 1;
    }
    this.active++;
    return true;
  }

  private refill(rate: { readonly calls: number; readonly perMs: number }): void {
    const now = this.now();
    const elapsed = now - this.refilledAt;
    if (elapsed <= 0) return;
    this.tokens = Math.min(rate.calls, this.tokens + (elapsed * rate.calls) / rate.perMs);
    this.refilledAt = now;
  }

  /** Serves waiters in order while turns are free; when only the rate holds them back, wakes up when the next token is due. */
  private pump(): void {
    while (this.queue.length > 0 && this.tryTake()) {
      const waiter = this.queue.shift() as Waiter;
      waiter.grant();
    }
    const rate = this.limits.rate;
    if (this.queue.length === 0 || rate === undefined || this.timer !== undefined) return;
    const concurrencyFree = this.limits.maxConcurrent === undefined || this.active < this.limits.maxConcurrent;
    if (!concurrencyFree) return;
    const dueInMs = Math.max(1, Math.ceil(((1 - this.tokens) * rate.perMs) / rate.calls));
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.pump();
    }, dueInMs);
  }

  private exceeded(subject: LimitSubject, waitedMs: number | undefined): ToolLimitExceededError {
    const { maxConcurrent, rate } = this.limits;
    const concurrencyFull = maxConcurrent !== undefined && this.active >= maxConcurrent;
    const limit = concurrencyFull || rate === undefined ? 'concurrency' : 'rate';
    return new ToolLimitExceededError({
      toolName: subject.toolName,
      planId: subject.planId,
      limit,
      scope: this.scope,
      detail: limit === 'concurrency' ? `${maxConcurrent} call(s) at once` : `${rate?.calls} call(s) per ${rate?.perMs} ms`,
      ...(waitedMs === undefined ? {} : { waitedMs }),
    });
  }
}
