import { ToolCancelledError, type CancellationToken } from '@ca/tool-context';

/**
 * Waits for `work` unless the token is cancelled first: an activation (or a
 * call of the same step) that ignores cancellation must not keep its caller
 * waiting. The work goes on in the background; whoever started it still
 * tracks and matches it.
 */
export function untilCancelled(work: Promise<void>, token: CancellationToken, toolName: string, planId: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    if (token.isCancelled) {
      work.catch(() => undefined); // its outcome is the owner's business now
      reject(new ToolCancelledError({ reason: token.reason ?? 'cancelled', toolName, planId }));
      return;
    }
    const unsubscribe = token.onCancel((reason) => reject(new ToolCancelledError({ reason, toolName, planId })));
    work.then(
      () => {
        unsubscribe();
        resolve();
      },
      (error: unknown) => {
        unsubscribe();
        reject(error);
      },
    );
  });
}

/** Waits `ms` unless the plan is cancelled first. */
export function sleep(ms: number, token: CancellationToken, toolName: string, planId: string): Promise<void> {
  token.check({ toolName, planId });
  if (ms <= 0) return Promise.resolve();
  return new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      unsubscribe();
      resolve();
    }, ms);
    const unsubscribe = token.onCancel((reason) => {
      clearTimeout(timer);
      reject(new ToolCancelledError({ reason, toolName, planId }));
    });
  });
}
