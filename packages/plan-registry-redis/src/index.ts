export { RedisPlanRegistry, connectRedisPlanRegistry } from './redis-plan-registry';
export { registerRedisPlanRegistry } from './register-redis-plan-registry';
export { describeRedisUrl, redisCredentialsFromEnvironment } from './redis-plan-registry-settings';
export type { RedisPlanRegistrySettings, RedisTlsSettings } from './redis-plan-registry-settings';
export { RedisResultStore } from './redis-result-store';
export type { RedisCommand, RedisResultStoreOptions } from './redis-result-store';
