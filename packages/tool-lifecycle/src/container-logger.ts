import type { DependencyContainer } from 'tsyringe';
import { RUNTIME_LOGGER } from './tokens';
import { createConsoleLogger, type RuntimeLogger } from './observability';

/**
 * The logger of an adapter registered in `container`: the container's
 * `RUNTIME_LOGGER`, looked up each time a line is logged — so the adapter may
 * be registered before the runtime, whose registration puts a console logger
 * there when the service put none — else a console logger (`warn` and up).
 */
export function containerLogger(container: DependencyContainer): RuntimeLogger {
  const fallback = createConsoleLogger();
  const current = (): RuntimeLogger => (container.isRegistered(RUNTIME_LOGGER, true) ? container.resolve(RUNTIME_LOGGER) : fallback);
  return Object.freeze({
    debug: (message, fields) => current().debug(message, fields),
    info: (message, fields) => current().info(message, fields),
    warn: (message, fields) => current().warn(message, fields),
    error: (message, fields) => current().error(message, fields),
  } satisfies RuntimeLogger);
}
