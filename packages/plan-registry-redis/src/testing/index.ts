// For tests of services that use the Redis plan registry: a redis-server of their own.
export { freePort, startRedisServer } from './redis-server';
export type { TestRedisOptions, TestRedisServer } from './redis-server';
