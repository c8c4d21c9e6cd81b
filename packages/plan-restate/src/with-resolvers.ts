// @restatedev/restate-sdk 1.17 calls Promise.withResolvers, which Node 20 lacks
// (its first invocation fails with "Promise.withResolvers is not a function").
// Installed once, before the SDK runs, and only where it is missing.
type Resolvers<T> = { promise: Promise<T>; resolve: (value: T | PromiseLike<T>) => void; reject: (reason?: unknown) => void };

export function installWithResolvers(): void {
  const promise = Promise as unknown as { withResolvers?: <T>() => Resolvers<T> };
  if (typeof promise.withResolvers === 'function') return;
  Object.defineProperty(Promise, 'withResolvers', {
    configurable: true,
    writable: true,
    value: function withResolvers<T>(): Resolvers<T> {
      let resolve!: Resolvers<T>['resolve'];
      let reject!: Resolvers<T>['reject'];
      const made = new Promise<T>((onResolve, onReject) => {
        resolve = onResolve;
        reject = onReject;
      });
      return { promise: made, resolve, reject };
    },
  });
}
