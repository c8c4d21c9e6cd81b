// For tests of durable plans: a restate-server of the test's own, a forwarder in front of several hosts,
// and the command line of a loopback-only network namespace.
export { loopbackCommand, restateServerBinary, startRestateServer } from './restate-server';
export type { TestRestateServer } from './restate-server';
export { startForwarder } from './forwarder';
export type { Forwarder } from './forwarder';
