import type fc from 'fast-check';

/**
 * Parameters of a property run. Locally the seed is random on each run, so
 * every run explores new cases; fast-check prints the seed, the shrunk
 * counterexample and its path when a property fails, and FC_SEED (and
 * FC_PATH) replay that run exactly. In CI (CI=true) the seed is fixed, so a
 * merge is judged on the same cases every time; set FC_SEED to explore there.
 */
export const CI_SEED = 20261202;

export function propertyParameters<T>(numRuns: number): fc.Parameters<T> {
  const given = process.env.FC_SEED ?? (process.env.CI === 'true' ? String(CI_SEED) : undefined);
  const seed = given === undefined ? undefined : Number(given);
  const path = process.env.FC_PATH;
  return {
    numRuns,
    ...(seed === undefined || !Number.isFinite(seed) ? {} : { seed }),
    ...(path === undefined ? {} : { path }),
  };
}
