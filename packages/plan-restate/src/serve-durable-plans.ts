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
  server.on('session', (session) => {
    sessions.add(session);
    session.on('close', () => sessions.delete(session));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.bindAddress ?? '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://${options.bindAddress ?? '127.0.0.1'}:${port}`,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const session of sessions) session.destroy();
        server.close(() => resolve());
      }),
  };
}
