import { createSchemaValidator, type SchemaIssue, type SchemaValidator } from '@ca/schema';
import configSchema from './agents-config.schema.json';
import planSchema from './plan-file.schema.json';
import { CliError, type CliErrorCode } from './cli-error';
import { didYouMean } from './suggest';

let validator: SchemaValidator | undefined;

/** A file of rules (`approval.rulesFiles`, `--rules`): `{ "rules": [...] }`, each rule as in the configuration. */
const rulesSchema = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  $id: 'https://ca.internal/schemas/agents.rules.json',
  type: 'object',
  additionalProperties: false,
  required: ['rules'],
  properties: {
    $schema: { type: 'string' },
    rules: { type: 'array', items: { $ref: 'https://ca.internal/schemas/agents.config.json#/$defs/toolRule' } },
  },
} as const;

function schemaValidator(): SchemaValidator {
  if (validator === undefined) {
    validator = createSchemaValidator();
    validator.addSchema(configSchema);
  }
  return validator;
}

/** Where an issue is, as a JSON pointer that names the offending key. */
function locate(issue: SchemaIssue): string {
  const extra = issue.params?.['additionalProperty'] ?? issue.params?.['missingProperty'];
  const pointer = issue.instancePath === '' ? '' : issue.instancePath;
  return typeof extra === 'string' ? `${pointer}/${extra}` : pointer || '/';
}

/**
 * The keys the schema allows where an `additionalProperties` issue was
 * raised: `schemaPath` (`<uri>#/properties/skills/additionalProperties`)
 * leads to the schema object, whose `properties` are the known keys.
 */
export function knownKeysAt(schemaPath: string, root: object, schemas: readonly object[] = [configSchema, planSchema, rulesSchema]): string[] {
  const hash = schemaPath.indexOf('#');
  const uri = hash <= 0 ? '' : schemaPath.slice(0, hash);
  let node: unknown = uri === '' ? root : schemas.find((schema) => (schema as { $id?: string }).$id === uri);
  const pointer = schemaPath
    .slice(hash + 1)
    .split('/')
    .slice(1, -1);
  for (const segment of pointer) {
    if (typeof node !== 'object' || node === null) return [];
    node = (node as Record<string, unknown>)[segment.replace(/~1/g, '/').replace(/~0/g, '~')];
  }
  const properties = (node as { properties?: unknown } | undefined)?.properties;
  return typeof properties === 'object' && properties !== null ? Object.keys(properties).filter((key) => key !== '$schema') : [];
}

function describe(issue: SchemaIssue, root: object): string {
  if (issue.keyword === 'additionalProperties') {
    const key = issue.params?.['additionalProperty'];
    const suggestion = typeof key === 'string' ? didYouMean(key, knownKeysAt(issue.schemaPath, root)) : '';
    return `is not a known key here.${suggestion}`;
  }
  if (issue.keyword === 'required') return 'is required';
  return issue.message.replace(/^\S*\s/, '');
}

/** An issue raised inside one branch of a `oneOf`/`anyOf`. */
function inBranch(issue: SchemaIssue): boolean {
  return /\/(oneOf|anyOf)\/\d+\//.test(issue.schemaPath);
}

/**
 * Validates a configuration or plan document against the JSON Schema shipped
 * with the CLI.
 * @throws CliError listing every problem, each at the key it concerns.
 */
export function validateDocument(kind: 'config' | 'plan' | 'rules', value: unknown, file: string, code: CliErrorCode): void {
  const root = kind === 'config' ? configSchema : kind === 'plan' ? planSchema : rulesSchema;
  const result = schemaValidator().validate(root, value, { trust: 'trusted' });
  if (result.valid) return;
  // oneOf/anyOf produce an issue per branch; keep the most specific ones: the
  // combinators' own issues go, and so do a branch's issues at a place that
  // also has an issue outside any branch (an unknown key is the problem, not
  // the branch it fails to match).
  const issues = result.issues.filter((issue) => issue.keyword !== 'oneOf' && issue.keyword !== 'anyOf' && issue.keyword !== 'if');
  const plain = new Set(issues.filter((issue) => !inBranch(issue)).map((issue) => issue.instancePath));
  const specific = issues.filter((issue) => !inBranch(issue) || !plain.has(issue.instancePath));
  const shown = (specific.length > 0 ? specific : result.issues).slice(0, 20);
  const lines = [...new Set(shown.map((issue) => `  ${locate(issue)}: ${describe(issue, root)}`))];
  throw new CliError({
    code,
    message: `${kind === 'config' ? 'Configuration' : kind === 'plan' ? 'Plan file' : 'Rules file'} ${file} is invalid:\n${lines.join('\n')}\n${
      kind === 'config'
        ? 'See the agents.config schema (packages/cli/src/agents-config.schema.json, shipped as @ca/cli/agents-config.schema.json).'
        : kind === 'plan'
          ? 'See the plan file schema (@ca/cli/plan-file.schema.json).'
          : 'A rules file is { "rules": [ { "name", "decision", "tools", "arguments"?, "reason"?, "examples"? } ] } (rulesFile in @ca/cli/agents-config.schema.json).'
    }`,
  });
}

export { configSchema, planSchema };
