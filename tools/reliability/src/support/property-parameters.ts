import type fc from 'fast-check';

/**
 * Parameters of a property run. The seed is random on each run (so CI keeps
 * exploring) and fast-check prints it, with the shrunk counterexample and its
 * path, when a property fails; set FC_SEED (and FC_PATH) to replay that run
 * exactly.
 */
export function propertyParameters<T>(numRuns: number): fc.Parameters<T> {
  const seed = process.env.FC_SEED === undefined ? undefined : Number(process.env.FC_SEED);
  const path = process.env.FC_PATH;
  return {
    numRuns,
    ...(seed === undefined || !Number.isFinite(seed) ? {} : { seed }),
    ...(path === undefined ? {} : { path }),
  };
}
