import fs from 'node:fs';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { CliError, type CliErrorCode } from './cli-error';

/** Largest configuration or plan file read, in bytes. */
export const MAX_DOCUMENT_BYTES = 4 * 1024 * 1024;

/**
 * Reads a JSON or YAML document (by extension: `.yaml`/`.yml` are YAML,
 * everything else JSON), with clear errors for a missing, oversized or
 * unparseable file.
 */
export function readDocument(file: string, codes: { notFound: CliErrorCode; invalid: CliErrorCode }, what: string): unknown {
  let stat: fs.Stats;
  try {
    stat = fs.statSync(file);
  } catch {
    throw new CliError({ code: codes.notFound, message: `${what} ${file} does not exist. Check the path.` });
  }
  if (!stat.isFile()) throw new CliError({ code: codes.invalid, message: `${what} ${file} is not a file.` });
  if (stat.size > MAX_DOCUMENT_BYTES) {
    throw new CliError({ code: codes.invalid, message: `${what} ${file} is ${stat.size} bytes; the limit is ${MAX_DOCUMENT_BYTES}.` });
  }
  const text = fs.readFileSync(file, 'utf8');
  const yaml = /\.ya?ml$/i.test(path.extname(file));
  try {
    return yaml ? parseYaml(text, { maxAliasCount: 100 }) : JSON.parse(text);
  } catch (error) {
    throw new CliError({
      code: codes.invalid,
      cause: error,
      message: `${what} ${file} is not valid ${yaml ? 'YAML' : 'JSON'}: ${(error as Error).message}`,
    });
  }
}
