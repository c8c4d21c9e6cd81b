import { MINIMAL_ENVIRONMENT_VARIABLES } from '@ca/sandbox';

/**
 * Variables of this process's environment that every stdio server gets,
 * when set: the process runner's `MINIMAL_ENVIRONMENT_VARIABLES` (enough to
 * find programs, a home, a locale, a terminal type and a temp directory; not
 * `SHELL`, nothing that could carry a secret), the same list every program
 * the runtime starts gets. Everything else must be declared in the server's
 * `env`, or named in its `inheritEnv`. Values that look like exported shell
 * functions (`() {…`) are left out.
 */
export const DEFAULT_INHERITED_ENVIRONMENT: readonly string[] = MINIMAL_ENVIRONMENT_VARIABLES;
