import { createSchemaValidator, type SchemaIssue, type SchemaValidator } from '@ca/schema';
import configSchema from './agents-config.schema.json';
import planSchema from './plan-file.schema.json';
import { CliError, type CliErrorCode } from './cli-error';

let validator: SchemaValidator | undefined;

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

function describe(issue: SchemaIssue): string {
  if (issue.keyword === 'additionalProperties') return 'is not a known key here';
  if (issue.keyword === 'required') return 'is required';
  return issue.message.replace(/^\S*\s/, '');
}

/**
 * Validates a configuration or plan document against the JSON Schema shipped
 * with the CLI.
 * @throws CliError listing every problem, each at the key it concerns.
 */
export function validateDocument(kind: 'config' | 'plan', value: unknown, file: string, code: CliErrorCode): void {
  const result = schemaValidator().validate(kind === 'config' ? configSchema : planSchema, value, { trust: 'trusted' });
  if (result.valid) return;
  // oneOf/anyOf produce an issue per branch; keep the most specific ones.
  const issues = result.issues.filter((issue) => issue.keyword !== 'oneOf' && issue.keyword !== 'anyOf' && issue.keyword !== 'if');
  const shown = (issues.length > 0 ? issues : result.issues).slice(0, 20);
  const lines = [...new Set(shown.map((issue) => `  ${locate(issue)}: ${describe(issue)}`))];
  throw new CliError({
    code,
    message: `${kind === 'config' ? 'Configuration' : 'Plan file'} ${file} is invalid:\n${lines.join('\n')}\n${
      kind === 'config'
        ? 'See the agents.config schema (packages/cli/src/agents-config.schema.json, shipped as @ca/cli/agents-config.schema.json).'
        : 'See the plan file schema (@ca/cli/plan-file.schema.json).'
    }`,
  });
}

export { configSchema, planSchema };
