import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Why waiting for the browser's redirect ended without a code. */
export class RedirectError extends Error {
  constructor(
    readonly reason: 'timeout' | 'refused',
    message: string,
  ) {
    super(message);
    this.name = 'RedirectError';
  }
}

/** The loopback address the authorization server sends the browser back to. */
export interface RedirectListener {
  /** `http://127.0.0.1:<port>/callback`. */
  readonly url: string;
  /**
   * Resolves with the authorization code of the first redirect that carries
   * `state`; rejects with a {@link RedirectError} when the authorization
   * server reports an error, or after `timeoutMs`, or with the signal's reason.
   */
  waitForCode(state: string, signal: AbortSignal | undefined, timeoutMs: number): Promise<string>;
  /** Stops listening. Idempotent. */
  close(): Promise<void>;
}

const PAGE = (title: string, text: string) => `<!doctype html><meta charset="utf-8"><title>${title}</title><p>${text}</p>`;

/**
 * Listens on 127.0.0.1 (never a wider address: the code must not be sent to
 * anyone else) for the redirect of an OAuth authorization code flow, as RFC
 * 8252 describes for native applications.
 *
 * @internal
 */
export async function listenForRedirect(port: number): Promise<RedirectListener> {
  type Waiter = { state: string; resolve: (code: string) => void; reject: (error: unknown) => void };
  let waiter: Waiter | undefined;
  const server: Server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://127.0.0.1');
    if (request.method !== 'GET' || url.pathname !== '/callback') {
      response.writeHead(404, { 'content-type': 'text/plain' }).end('Not found.');
      return;
    }
    const state = url.searchParams.get('state');
    if (waiter === undefined || state !== waiter.state) {
      // Not the authorization this process started: never take its code.
      response
        .writeHead(400, { 'content-type': 'text/html; charset=utf-8' })
        .end(PAGE('Unexpected sign-in', 'This sign-in was not started here, or it is over. Start it again.'));
      return;
    }
    const current = waiter;
    waiter = undefined;
    const error = url.searchParams.get('error');
    const code = url.searchParams.get('code');
    if (error !== null || code === null) {
      const description = url.searchParams.get('error_description');
      response
        .writeHead(400, { 'content-type': 'text/html; charset=utf-8' })
        .end(PAGE('Sign-in failed', 'The sign-in did not succeed. You may close this window.'));
      current.reject(
        new RedirectError(
          'refused',
          `the authorization server answered ${error ?? 'without a code'}${description === null ? '' : `: ${description.slice(0, 300)}`}`,
        ),
      );
      return;
    }
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(PAGE('Signed in', 'Signed in. You may close this window.'));
    current.resolve(code);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  // A session keeps its listener while it is open: the listener alone must not keep the process alive (waiting for a code does).
  server.unref();
  const { port: actual } = server.address() as AddressInfo;
  let closed: Promise<void> | undefined;
  return {
    url: `http://127.0.0.1:${actual}/callback`,
    waitForCode: (state, signal, timeoutMs) =>
      new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => {
          cleanup();
          reject(new RedirectError('timeout', `nobody completed the sign-in within ${Math.round(timeoutMs / 1000)} s`));
        }, timeoutMs);
        const onAbort = () => {
          cleanup();
          reject(signal?.reason);
        };
        const cleanup = () => {
          clearTimeout(timer);
          signal?.removeEventListener('abort', onAbort);
          waiter = undefined;
        };
        if (signal?.aborted) {
          clearTimeout(timer);
          reject(signal.reason);
          return;
        }
        signal?.addEventListener('abort', onAbort, { once: true });
        waiter = {
          state,
          resolve: (code) => {
            cleanup();
            resolve(code);
          },
          reject: (error) => {
            cleanup();
            reject(error);
          },
        };
      }),
    close: () => {
      closed ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closed;
    },
  };
}
