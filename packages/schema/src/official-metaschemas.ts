import draft07 from 'ajv/dist/refs/json-schema-draft-07.json';
import applicator2019 from 'ajv/dist/refs/json-schema-2019-09/meta/applicator.json';
import content2019 from 'ajv/dist/refs/json-schema-2019-09/meta/content.json';
import core2019 from 'ajv/dist/refs/json-schema-2019-09/meta/core.json';
import format2019 from 'ajv/dist/refs/json-schema-2019-09/meta/format.json';
import metaData2019 from 'ajv/dist/refs/json-schema-2019-09/meta/meta-data.json';
import validation2019 from 'ajv/dist/refs/json-schema-2019-09/meta/validation.json';
import schema2019 from 'ajv/dist/refs/json-schema-2019-09/schema.json';
import applicator2020 from 'ajv/dist/refs/json-schema-2020-12/meta/applicator.json';
import content2020 from 'ajv/dist/refs/json-schema-2020-12/meta/content.json';
import core2020 from 'ajv/dist/refs/json-schema-2020-12/meta/core.json';
import formatAnnotation2020 from 'ajv/dist/refs/json-schema-2020-12/meta/format-annotation.json';
import metaData2020 from 'ajv/dist/refs/json-schema-2020-12/meta/meta-data.json';
import unevaluated2020 from 'ajv/dist/refs/json-schema-2020-12/meta/unevaluated.json';
import validation2020 from 'ajv/dist/refs/json-schema-2020-12/meta/validation.json';
import schema2020 from 'ajv/dist/refs/json-schema-2020-12/schema.json';
import type { SchemaDialect } from './schema-dialect';

/** A metaschema shipped with ajv, so that a `$ref` to it resolves without any fetch. */
export interface OfficialMetaschema {
  readonly dialect: SchemaDialect;
  readonly schema: { readonly $id: string; readonly [keyword: string]: unknown };
}

/** The official metaschemas (and their vocabulary metaschemas) of the supported dialects. */
export const OFFICIAL_METASCHEMAS: readonly OfficialMetaschema[] = [
  { dialect: 'draft-07' as const, schemas: [draft07] },
  {
    dialect: 'draft-2019-09' as const,
    schemas: [schema2019, applicator2019, content2019, core2019, format2019, metaData2019, validation2019],
  },
  {
    dialect: 'draft-2020-12' as const,
    schemas: [schema2020, applicator2020, content2020, core2020, formatAnnotation2020, metaData2020, unevaluated2020, validation2020],
  },
].flatMap(({ dialect, schemas }) => schemas.map((schema) => ({ dialect, schema: schema as OfficialMetaschema['schema'] })));
