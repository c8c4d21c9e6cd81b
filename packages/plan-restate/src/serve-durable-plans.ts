import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import * as restate from '@restatedev/restate-sdk';
import { createJournalCodec } from './journal-codec';
import type { PlanWorkflow } from './plan-workflow';
import { installWithResolvers } from './with-resolvers';

/** Options of {@link serveDurablePlans}. */
export interface ServeDurablePlansOptions {
  /** Port to listen on (default 0: a free one). */
  readonly port?: number;
  /** Address to listen on (default `127.0.0.1`). */
  readonly bindAddress?: string;
  /** Encrypts every value this host writes to Restate (see `createJournalCodec`); the same on every host. */
  readonly journalKey?: string | Uint8Array;
}

/** A host serving durable plans to Restate. */
export interface DurablePlanHost {
  /** `http://127.0.0.1:<port>`: what Restate is given (through a forwarder, when several hosts serve). */
  readonly url: string;
  readonly port: number;
  /** How many invocations this host runs now (open HTTP/2 streams from Restate). */
  readonly active: () => number;
  /**
   * Drains the host: stops taking connections, asks Restate's connections to
   * open no new stream (HTTP/2 GOAWAY), waits for the invocations it runs to
   * end or suspend — at most `timeoutMs` (default 30,000) — then closes. An
   * invocation still running then ends as with {@link close}.
   * @returns how many invocations were still running when it closed.
   */
  drain(timeoutMs?: number): Promise<number>;
  /** Stops listening and closes the connections (running attempts end; Restate resumes them elsewhere). */
  close(): Promise<void>;
}

/**
 * Serves the plan workflow on an HTTP/2 endpoint, the long-running process of
 * a host. Register its URL (or the forwarder's, for several hosts) with
 * Restate once (`DurablePlanClient.register`).
 */
export async function serveDurablePlans(workflow: PlanWorkflow, options: ServeDurablePlansOptions = {}): Promise<DurablePlanHost> {
  installWithResolvers();
  let endpoint = restate.endpoint().bind(workflow.workflow).bind(workflow.status);
  if (options.journalKey !== undefined) {
    const codec = createJournalCodec(options.journalKey);
    endpoint = endpoint.journalValueCodecProvider(() => Promise.resolve(codec));
  }
  const server = http2.createServer(endpoint.http2Handler());
  const sessions = new Set<http2.ServerHttp2Session>();
  let streams = 0;
  let idle: (() => void) | undefined;
  let draining = false;
  server.on('session', (session) => {
    sessions.add(session);
    session.on('close', () => sessions.delete(session));
    // A connection that arrives while draining (accepted before the listener closed) takes no new stream.
    if (draining) session.close();
  });
  server.on('stream', (stream) => {
    streams++;
    stream.once('close', () => {
      streams--;
      if (streams === 0) idle?.();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.bindAddress ?? '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const close = () =>
    new Promise<void>((resolve) => {
      for (const session of sessions) session.destroy();
      server.close(() => resolve());
    });
  return {
    url: `http://${options.bindAddress ?? '127.0.0.1'}:${port}`,
    port,
    active: () => streams,
    drain: async (timeoutMs = 30_000) => {
      draining = true;
      server.close();
      for (const session of sessions) session.close();
      if (streams > 0) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, timeoutMs);
          idle = () => {
            clearTimeout(timer);
            resolve();
          };
        });
      }
      const left = streams;
      await close();
      return left;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const session of sessions) session.destroy();
        server.close(() => resolve());
      }),
  };
}
