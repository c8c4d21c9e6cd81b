import { getEventListeners } from 'node:events';
import { CancellationToken, getCancellationListenerCounts } from './cancellation-token';
import { ContextValidationError } from './context-validation-error';
import { ToolCancelledError } from './tool-cancelled-error';

function activeTimers(): number {
  return process.getActiveResourcesInfo().filter((resource) => resource === 'Timeout').length;
}

function catchError(action: () => unknown): unknown {
  try {
    action();
  } catch (error) {
    return error;
  }
  throw new Error('expected the action to throw');
}

describe('CancellationToken', () => {
  describe('cancel', () => {
    it('starts not cancelled and without a reason', () => {
      const token = new CancellationToken();
      expect(token.isCancelled).toBe(false);
      expect(token.reason).toBeUndefined();
      expect(() => token.check()).not.toThrow();
    });

    it('is idempotent: the first reason wins', () => {
      const token = new CancellationToken();
      token.cancel('cancelled by user');
      token.cancel('second reason');
      token.cancel();
      expect(token.isCancelled).toBe(true);
      expect(token.reason).toBe('cancelled by user');
    });

    it("defaults the reason to 'cancelled' and turns a non-string reason into text", () => {
      const plain = new CancellationToken();
      plain.cancel();
      expect(plain.reason).toBe('cancelled');
      const fromError = new CancellationToken();
      fromError.cancel(new Error('shutting down') as unknown as string);
      expect(fromError.reason).toBe('shutting down');
    });
  });

  describe('check', () => {
    it('throws a ToolCancelledError with the reason, tool and plan', () => {
      const token = new CancellationToken();
      token.cancel('cancelled by user');
      const error = catchError(() => token.check({ toolName: 'builtin.fs.read', planId: 'plan-1' }));
      expect(ToolCancelledError.isInstance(error)).toBe(true);
      expect(error).toMatchObject({
        code: 'TOOL_CANCELLED',
        reason: 'cancelled by user',
        toolName: 'builtin.fs.read',
        planId: 'plan-1',
      });
      expect(catchError(() => token.check())).toMatchObject({ reason: 'cancelled by user' });
    });
  });

  describe('onCancel', () => {
    it('calls callbacks once, synchronously, in registration order, with the reason', () => {
      const token = new CancellationToken();
      const calls: string[] = [];
      token.onCancel((reason) => calls.push(`first: ${reason}`));
      token.onCancel((reason) => calls.push(`second: ${reason}`));
      token.cancel('stop');
      expect(calls).toEqual(['first: stop', 'second: stop']);
      token.cancel('again');
      expect(calls).toHaveLength(2);
    });

    it('calls a callback at once when the token is already cancelled', () => {
      const token = new CancellationToken();
      token.cancel('earlier');
      const callback = jest.fn();
      const unsubscribe = token.onCancel(callback);
      expect(callback).toHaveBeenCalledWith('earlier');
      expect(() => unsubscribe()).not.toThrow();
    });

    it('does not call a removed callback, and removing twice is harmless', () => {
      const token = new CancellationToken();
      const kept = jest.fn();
      const removed = jest.fn();
      token.onCancel(kept);
      const unsubscribe = token.onCancel(removed);
      token.onCancel(kept);
      unsubscribe();
      unsubscribe();
      expect(getCancellationListenerCounts(token).callbacks).toBe(2);
      token.cancel();
      expect(kept).toHaveBeenCalledTimes(2);
      expect(removed).not.toHaveBeenCalled();
      expect(getCancellationListenerCounts(token).callbacks).toBe(0);
    });

    it('skips a callback removed by an earlier one during cancellation', () => {
      const token = new CancellationToken();
      const later = jest.fn();
      token.onCancel(() => unsubscribeLater());
      const unsubscribeLater = token.onCancel(later);
      token.cancel();
      expect(later).not.toHaveBeenCalled();
    });

    it('runs every callback when one throws, then rethrows its error from cancel()', () => {
      const token = new CancellationToken();
      const failure = new Error('callback failed');
      const after = jest.fn();
      token.onCancel(() => {
        throw failure;
      });
      token.onCancel(after);
      expect(() => token.cancel()).toThrow(failure);
      expect(after).toHaveBeenCalled();
      expect(token.isCancelled).toBe(true);
    });

    it('rethrows an AggregateError when several callbacks throw', () => {
      const token = new CancellationToken();
      token.onCancel(() => {
        throw new Error('one');
      });
      token.child().onCancel(() => {
        throw new Error('two');
      });
      const error = catchError(() => token.cancel('stop'));
      expect(error).toBeInstanceOf(AggregateError);
      expect((error as AggregateError).errors.map((inner: Error) => inner.message).sort()).toEqual(['one', 'two']);
    });

    it('refuses a callback that is not a function', () => {
      expect(() => new CancellationToken().onCancel('nope' as never)).toThrow(ContextValidationError);
    });
  });

  describe('signal', () => {
    it('is created lazily, once, and aborts with a ToolCancelledError as reason', () => {
      const token = new CancellationToken();
      const signal = token.signal;
      expect(token.signal).toBe(signal);
      expect(signal.aborted).toBe(false);
      const onAbort = jest.fn();
      signal.addEventListener('abort', onAbort);
      token.cancel('cancelled by user');
      expect(onAbort).toHaveBeenCalledTimes(1);
      expect(signal.aborted).toBe(true);
      expect(ToolCancelledError.isInstance(signal.reason)).toBe(true);
      expect(signal.reason).toMatchObject({ reason: 'cancelled by user' });
      expect(() => signal.throwIfAborted()).toThrow(ToolCancelledError);
    });

    it('is already aborted when first read after cancellation', () => {
      const token = new CancellationToken();
      token.cancel('earlier');
      expect(token.signal.aborted).toBe(true);
      expect(token.signal.reason).toMatchObject({ code: 'TOOL_CANCELLED', reason: 'earlier' });
    });

    it("aborts a child's signal when the parent is cancelled, without listening on the parent's signal", () => {
      const parent = new CancellationToken();
      const child = parent.child();
      const childSignal = child.signal;
      expect(getEventListeners(parent.signal, 'abort')).toHaveLength(0);
      parent.cancel('plan ended');
      expect(childSignal.aborted).toBe(true);
      expect(childSignal.reason).toMatchObject({ reason: 'plan ended' });
    });
  });

  describe('outside signal', () => {
    it('follows an outside signal and takes the reason from it', () => {
      const controller = new AbortController();
      const token = new CancellationToken({ signal: controller.signal });
      expect(getEventListeners(controller.signal, 'abort')).toHaveLength(1);
      controller.abort(new Error('server shutting down'));
      expect(token.isCancelled).toBe(true);
      expect(token.reason).toBe('server shutting down');
      expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
    });

    it('is cancelled at once by an already aborted signal', () => {
      const token = new CancellationToken({ signal: AbortSignal.abort('too late') });
      expect(token.isCancelled).toBe(true);
      expect(token.reason).toBe('too late');
    });

    it("describes a reasonless abort with the DOMException's message", () => {
      const controller = new AbortController();
      const token = new CancellationToken({ signal: controller.signal });
      controller.abort();
      expect(token.reason).toBe('This operation was aborted');
    });

    it('keeps the reason of a ToolCancelledError from another token', () => {
      const source = new CancellationToken();
      const follower = new CancellationToken({ signal: source.signal });
      source.cancel('cancelled by user');
      expect(follower.reason).toBe('cancelled by user');
    });

    it('removes its listener on dispose and no longer follows the signal', () => {
      const controller = new AbortController();
      const token = new CancellationToken({ signal: controller.signal });
      token.dispose();
      expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
      controller.abort();
      expect(token.isCancelled).toBe(false);
    });

    it('removes its listener when cancelled directly', () => {
      const controller = new AbortController();
      const token = new CancellationToken({ signal: controller.signal });
      token.cancel();
      expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
    });
  });

  describe('timeout', () => {
    it("cancels after timeoutMs with the reason 'timed out after N ms'", async () => {
      const token = new CancellationToken({ timeoutMs: 5 });
      expect(token.isCancelled).toBe(false);
      await new Promise((resolve) => token.onCancel(resolve));
      expect(token.reason).toBe('timed out after 5 ms');
    });

    it('treats Infinity and delays beyond setTimeout range as no deadline', () => {
      const before = activeTimers();
      const forever = new CancellationToken({ timeoutMs: Infinity });
      const tooLong = new CancellationToken({ timeoutMs: 2 ** 31 });
      expect(activeTimers()).toBe(before);
      expect(forever.isCancelled || tooLong.isCancelled).toBe(false);
    });

    it.each([-1, Number.NaN, '50', null])('refuses timeoutMs %p', (timeoutMs) => {
      const error = catchError(() => new CancellationToken({ timeoutMs: timeoutMs as number }));
      expect(error).toBeInstanceOf(ContextValidationError);
      expect(error).toMatchObject({ field: 'timeoutMs' });
    });

    it('refuses options of the wrong type', () => {
      expect(() => new CancellationToken('fast' as never)).toThrow(ContextValidationError);
      expect(() => new CancellationToken({ signal: {} as AbortSignal })).toThrow(/Invalid signal: expected an AbortSignal/);
      expect(() => new CancellationToken({ parent: {} as CancellationToken })).toThrow(/Invalid parent/);
      expect(() => new CancellationToken().child({ timeoutMs: 10, reason: 42 as never })).toThrow(/Invalid reason/);
    });
  });

  describe('child', () => {
    it('is cancelled with the reason of its parent, down every level', () => {
      const parent = new CancellationToken();
      const child = parent.child();
      const grandchild = child.child();
      const seen = jest.fn();
      grandchild.onCancel(seen);
      parent.cancel('plan cancelled');
      expect(child.reason).toBe('plan cancelled');
      expect(grandchild.reason).toBe('plan cancelled');
      expect(seen).toHaveBeenCalledWith('plan cancelled');
    });

    it('cancels children before the parent runs its own callbacks', () => {
      const parent = new CancellationToken();
      const child = parent.child();
      let childStateSeenByParent: boolean | undefined;
      parent.onCancel(() => (childStateSeenByParent = child.isCancelled));
      parent.cancel();
      expect(childStateSeenByParent).toBe(true);
    });

    it('does not cancel the parent or its siblings when cancelled', () => {
      const parent = new CancellationToken();
      const child = parent.child();
      const sibling = parent.child();
      child.cancel('only this execution');
      expect(parent.isCancelled).toBe(false);
      expect(sibling.isCancelled).toBe(false);
      expect(getCancellationListenerCounts(parent).children).toBe(1);
    });

    it('is born cancelled when the parent already is', () => {
      const parent = new CancellationToken();
      parent.cancel('too late');
      const child = parent.child({ timeoutMs: 1000 });
      expect(child.isCancelled).toBe(true);
      expect(child.reason).toBe('too late');
    });

    it("times out on its own with 'timed out after N ms' or the given reason, leaving the parent alone", async () => {
      const parent = new CancellationToken();
      const child = parent.child({ timeoutMs: 10 });
      const custom = parent.child({ timeoutMs: 10, reason: 'echo took too long' });
      await new Promise((resolve) => custom.onCancel(resolve));
      await new Promise((resolve) => child.onCancel(resolve));
      expect(child.reason).toBe('timed out after 10 ms');
      expect(custom.reason).toBe('echo took too long');
      expect(parent.isCancelled).toBe(false);
      expect(getCancellationListenerCounts(parent).children).toBe(0);
    });

    it('no longer follows its parent once disposed, but keeps its state and can still be cancelled', () => {
      const parent = new CancellationToken();
      const cancelledChild = parent.child();
      cancelledChild.cancel('own reason');
      cancelledChild.dispose();
      const child = parent.child();
      child.dispose();
      child.dispose();
      parent.cancel('parent reason');
      expect(cancelledChild.reason).toBe('own reason');
      expect(child.isCancelled).toBe(false);
      child.cancel('direct');
      expect(child.reason).toBe('direct');
    });

    it('skips a sibling disposed by an earlier callback during cancellation', () => {
      const parent = new CancellationToken();
      const first = parent.child();
      const second = parent.child();
      first.onCancel(() => second.dispose());
      parent.cancel();
      expect(first.isCancelled).toBe(true);
      expect(second.isCancelled).toBe(false);
    });

    it('creates and disposes 100,000 children and leaves the parent as it found it', () => {
      const parent = new CancellationToken();
      const signal = parent.signal;
      const listenersBefore = getEventListeners(signal, 'abort').length;
      const countsBefore = getCancellationListenerCounts(parent);
      const timersBefore = activeTimers();

      for (let index = 0; index < 100_000; index++) parent.child().dispose();

      const children = Array.from({ length: 100_000 }, (_, index) => (index % 10 === 0 ? parent.child({ timeoutMs: 60_000 }) : parent.child()));
      children.forEach((child, index) => index % 100 === 0 && child.signal);
      expect(getCancellationListenerCounts(parent).children).toBe(100_000);
      expect(getEventListeners(signal, 'abort')).toHaveLength(listenersBefore);
      // Dispose out of order, to unlink from the middle of the list.
      for (let index = 0; index < children.length; index += 2) children[index].dispose();
      for (let index = 1; index < children.length; index += 2) children[index].dispose();

      expect(getEventListeners(signal, 'abort')).toHaveLength(listenersBefore);
      expect(getCancellationListenerCounts(parent)).toEqual(countsBefore);
      expect(getCancellationListenerCounts(parent)).toEqual({ callbacks: 0, children: 0 });
      expect(activeTimers()).toBe(timersBefore);
      parent.cancel();
      expect(children.some((child) => child.isCancelled)).toBe(false);
    });

    it('leaves no timer behind once disposed, cancelled, or cancelled through its parent', () => {
      const before = activeTimers();
      const parent = new CancellationToken();
      const disposed = parent.child({ timeoutMs: 60_000 });
      const cancelled = parent.child({ timeoutMs: 60_000 });
      const followed = parent.child({ timeoutMs: 60_000 });
      const standalone = new CancellationToken({ timeoutMs: 60_000 });
      expect(activeTimers()).toBe(before + 4);
      disposed.dispose();
      cancelled.cancel();
      standalone.dispose();
      expect(activeTimers()).toBe(before + 1);
      parent.cancel();
      expect(followed.isCancelled).toBe(true);
      expect(activeTimers()).toBe(before);
    });
  });

  describe('parent option', () => {
    it('follows a parent like child() does, together with a signal', () => {
      const parent = new CancellationToken();
      const controller = new AbortController();
      const token = new CancellationToken({ parent, signal: controller.signal });
      parent.cancel('from parent');
      expect(token.reason).toBe('from parent');
      expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
    });

    it('follows a token from another installed copy through its public onCancel, and detaches on dispose', () => {
      const callbacks = new Set<(reason: string) => void>();
      const foreign = {
        isCancelled: false,
        reason: undefined as string | undefined,
        onCancel(callback: (reason: string) => void) {
          callbacks.add(callback);
          return () => callbacks.delete(callback);
        },
      };
      const follower = new CancellationToken({ parent: foreign as unknown as CancellationToken });
      const disposed = new CancellationToken({ parent: foreign as unknown as CancellationToken });
      expect(callbacks.size).toBe(2);
      disposed.dispose();
      expect(callbacks.size).toBe(1);
      [...callbacks].forEach((callback) => callback('foreign reason'));
      expect(follower.reason).toBe('foreign reason');
      expect(disposed.isCancelled).toBe(false);
    });
  });

  describe('none', () => {
    it('is one shared token that is never cancelled and stores no callbacks', () => {
      const none = CancellationToken.none();
      expect(CancellationToken.none()).toBe(none);
      none.onCancel(() => undefined)();
      expect(getCancellationListenerCounts(none)).toEqual({ callbacks: 0, children: 0 });
      expect(none.signal.aborted).toBe(false);
      expect(() => none.check()).not.toThrow();
      none.dispose();
    });

    it('refuses cancel() with a TypeError that says what to do', () => {
      expect(() => CancellationToken.none().cancel('stop')).toThrow(TypeError);
      expect(() => CancellationToken.none().cancel()).toThrow(/create a token with new CancellationToken\(\)/);
      expect(CancellationToken.none().isCancelled).toBe(false);
    });

    it('gives children that are not linked to it but can time out or be cancelled', async () => {
      const none = CancellationToken.none();
      const child = none.child();
      const timed = none.child({ timeoutMs: 1 });
      expect(getCancellationListenerCounts(none).children).toBe(0);
      child.cancel('own');
      expect(child.reason).toBe('own');
      await new Promise((resolve) => timed.onCancel(resolve));
      expect(timed.reason).toBe('timed out after 1 ms');
    });
  });
});
