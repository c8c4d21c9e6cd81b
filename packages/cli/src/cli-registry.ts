import fs from 'node:fs';
import path from 'node:path';
import type { PlanRegistry, RuntimeLogger } from '@ca/tool-lifecycle';
import { CliError } from './cli-error';
import type { AgentsConfig, RegistrySetting } from './config';
import { LocalPlanRegistry } from './plan-registry';

/** What {@link openPlanRegistry} needs to choose and open the registry. */
export interface RegistryChoice {
  /** `--registry`, when given: `local` or a `redis://` / `rediss://` URL. */
  readonly option: string | undefined;
  /** The configuration, when the command loaded one. */
  readonly config: AgentsConfig | undefined;
  /** The state folder of the local registry. */
  readonly stateDir: string;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly logger: RuntimeLogger;
}

const REDIS_URL = /^rediss?:\/\/\S+$/;

// Loaded only when a Redis registry is configured: most commands never need the client.
const loadRedisRegistry = () => require('@ca/plan-registry-redis') as typeof import('@ca/plan-registry-redis');

/**
 * Opens the plan registry the command uses: `--registry`, else the
 * configuration's `registry`, else the local state folder. A Redis registry
 * is connected before this returns (its user and password from
 * `REDIS_USERNAME` and `REDIS_PASSWORD`).
 * @throws CliError (CLI_USAGE) for a `--registry` that is neither `local` nor
 *   a Redis URL, (CLI_CONFIG_INVALID) for a TLS authority file that cannot be
 *   read; PlanRegistryError when Redis cannot be reached or refuses the credentials.
 */
export async function openPlanRegistry(choice: RegistryChoice): Promise<PlanRegistry> {
  const { option, config } = choice;
  if (option !== undefined && option !== 'local' && !REDIS_URL.test(option)) {
    throw new CliError({
      code: 'CLI_USAGE',
      message: `--registry ${option}: expected 'local' or a Redis URL such as redis://127.0.0.1:6379/0 (rediss:// for TLS).`,
    });
  }
  const setting: RegistrySetting | undefined = option ?? (config?.registry as RegistrySetting | undefined);
  if (setting === undefined || setting === 'local') return new LocalPlanRegistry(choice.stateDir);
  const entry = typeof setting === 'string' ? { url: setting } : setting;
  const { tls, ...rest } = entry;
  let ca: Buffer | undefined;
  if (tls?.caFile !== undefined) {
    const file = path.resolve(config?.baseDir ?? process.cwd(), tls.caFile);
    try {
      ca = fs.readFileSync(file);
    } catch (error) {
      throw new CliError({
        code: 'CLI_CONFIG_INVALID',
        message: `Configuration ${config?.file ?? '(none)'}: /registry/tls/caFile ${file} cannot be read: ${(error as Error).message}.`,
        cause: error,
      });
    }
  }
  const redis = loadRedisRegistry();
  return redis.connectRedisPlanRegistry({
    ...rest,
    ...redis.redisCredentialsFromEnvironment(choice.env),
    ...(tls === undefined ? {} : { tls: { ...(ca === undefined ? {} : { ca }), ...(tls.servername === undefined ? {} : { servername: tls.servername }) } }),
    logger: choice.logger,
  });
}
