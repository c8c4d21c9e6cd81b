/**
 * A JSON Schema dialect this package validates under. A schema chooses its
 * dialect with `$schema`; one without `$schema` gets the validator's default
 * (`draft-2020-12` unless configured otherwise).
 */
export type SchemaDialect = 'draft-07' | 'draft-2019-09' | 'draft-2020-12';

/** The metaschema URI of each dialect, as schemas declare it in `$schema`. */
export const DIALECT_URIS: Readonly<Record<SchemaDialect, string>> = Object.freeze({
  'draft-07': 'http://json-schema.org/draft-07/schema',
  'draft-2019-09': 'https://json-schema.org/draft/2019-09/schema',
  'draft-2020-12': 'https://json-schema.org/draft/2020-12/schema',
});

/** Every supported dialect. */
export const SCHEMA_DIALECTS: readonly SchemaDialect[] = Object.freeze(['draft-07', 'draft-2019-09', 'draft-2020-12']);

/**
 * The dialect whose metaschema is `uri`, accepting `http` or `https` and an
 * empty fragment (`http://json-schema.org/draft-07/schema#`); `undefined`
 * for any other URI.
 */
export function dialectOfMetaschemaUri(uri: string): SchemaDialect | undefined {
  const normalised = uri
    .trim()
    .replace(/#$/, '')
    .replace(/^https?:\/\//i, '')
    .toLowerCase();
  for (const dialect of SCHEMA_DIALECTS) {
    if (DIALECT_URIS[dialect].replace(/^https?:\/\//, '') === normalised) return dialect;
  }
  return undefined;
}

/** True when `value` is a {@link SchemaDialect}. */
export function isSchemaDialect(value: unknown): value is SchemaDialect {
  return typeof value === 'string' && (SCHEMA_DIALECTS as readonly string[]).includes(value);
}
