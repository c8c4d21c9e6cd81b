import { isValidToolName, messageOf } from '@ca/domain';
import { parseDocument } from 'yaml';
import { parseSimpleFrontmatter } from './simple-frontmatter';
import type { SkillDiagnosticCode, SkillDiagnosticSeverity } from './skill-diagnostic';

/** Longest `name` the Agent Skills specification allows. */
export const MAX_SKILL_NAME_LENGTH = 64;
/** Longest `description` the specification allows. */
export const MAX_SKILL_DESCRIPTION_LENGTH = 1024;
/** Longest `compatibility` the specification allows. */
export const MAX_SKILL_COMPATIBILITY_LENGTH = 500;

/** The frontmatter fields the specification defines. */
const KNOWN_FIELDS = new Set(['name', 'description', 'license', 'compatibility', 'metadata', 'allowed-tools']);

/** @internal A problem found in a frontmatter, before `strict` is applied. */
export interface FrontmatterIssue {
  readonly severity: SkillDiagnosticSeverity;
  readonly code: SkillDiagnosticCode;
  readonly message: string;
  readonly field?: string;
}

/** @internal What a valid (or leniently accepted) frontmatter holds. */
export interface SkillFrontmatter {
  readonly name: string;
  readonly description: string;
  readonly license?: string;
  readonly compatibility?: string;
  readonly metadata: Readonly<Record<string, string>>;
  readonly allowedTools: readonly string[];
}

/** @internal The result of {@link checkFrontmatter}: the frontmatter unless an error makes the skill unusable. */
export interface FrontmatterCheck {
  readonly frontmatter?: SkillFrontmatter;
  /** Best-known name (the frontmatter's, else the folder's), for messages. */
  readonly name: string;
  readonly issues: readonly FrontmatterIssue[];
}

/**
 * @internal Parses and checks the YAML of a frontmatter against the Agent
 * Skills specification. Problems a lenient client tolerates are warnings;
 * only a missing description, unparseable YAML and a name that cannot become
 * a tool name are errors.
 */
export function checkFrontmatter(yamlText: string, folderName: string): FrontmatterCheck {
  const issues: FrontmatterIssue[] = [];
  let value: unknown = parseSimpleFrontmatter(yamlText);
  if (value === undefined) {
    const document = parseDocument(yamlText, { prettyErrors: false, strict: false });
    if (document.errors.length > 0) {
      const first = document.errors[0];
      const line = first.linePos?.[0]?.line;
      issues.push({
        severity: 'error',
        code: 'SKILL_YAML_INVALID',
        message: `The frontmatter of SKILL.md is not valid YAML${line === undefined ? '' : ` (frontmatter line ${line})`}: ${first.message.split('\n')[0]}. Fix the YAML between the --- lines (quote values that contain ': ').`,
      });
      return { name: folderName, issues };
    }
    try {
      value = document.toJS({ maxAliasCount: 100 }) ?? {};
    } catch (error) {
      // An alias bomb ("Excessive alias count …") or another structure that only fails when built: this skill's problem alone.
      issues.push({
        severity: 'error',
        code: 'SKILL_YAML_INVALID',
        message: `The frontmatter of SKILL.md could not be read as YAML: ${messageOf(error).split('\n')[0]}. Remove anchors and aliases (&name, *name) that expand the frontmatter, and write the fields out.`,
      });
      return { name: folderName, issues };
    }
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    issues.push({
      severity: 'error',
      code: 'SKILL_YAML_INVALID',
      message: `The frontmatter of SKILL.md must be a YAML mapping of fields (name: …, description: …), not ${Array.isArray(value) ? 'a list' : `a ${typeof value}`}.`,
    });
    return { name: folderName, issues };
  }
  const fields = value as Record<string, unknown>;

  let name = folderName;
  if (typeof fields['name'] === 'string' && fields['name'].length > 0) {
    name = fields['name'];
    const problems = nameProblems(name);
    if (problems.length > 0) {
      issues.push({ severity: 'warning', code: 'SKILL_NAME_INVALID', field: 'name', message: `${problems.join('; ')}.` });
    }
    if (name !== folderName) {
      issues.push({
        severity: 'warning',
        code: 'SKILL_NAME_MISMATCH',
        field: 'name',
        message: `Directory name '${folderName}' must match skill name '${name}'. Rename the folder or the name; the skill is offered as 'skill.${name}'.`,
      });
    }
  } else {
    issues.push({
      severity: 'warning',
      code: 'SKILL_NAME_MISSING',
      field: 'name',
      message: `Missing required field in frontmatter: name${fields['name'] === undefined ? '' : ' (it is not a non-empty string)'}. The folder name '${folderName}' is used instead; add name: ${folderName}.`,
    });
  }
  if (!isValidToolName(`skill.${name}`)) {
    issues.push({
      severity: 'error',
      code: 'SKILL_NAME_INVALID',
      field: 'name',
      message: `The skill name '${name}' cannot form a tool name ('skill.${name}' must be at most 200 letters, digits, '_', '.', ':' or '-'). Use lowercase letters, digits and single hyphens.`,
    });
  }

  const description = fields['description'];
  if (typeof description !== 'string' || description.trim().length === 0) {
    issues.push({
      severity: 'error',
      code: 'SKILL_DESCRIPTION_MISSING',
      field: 'description',
      message: `Missing required field in frontmatter: description${description === undefined ? '' : ' (it must be a non-empty string)'}. Add a description of what the skill does and when to use it; without one the skill cannot be disclosed.`,
    });
  } else if (characterCount(description) > MAX_SKILL_DESCRIPTION_LENGTH) {
    issues.push({
      severity: 'warning',
      code: 'SKILL_DESCRIPTION_TOO_LONG',
      field: 'description',
      message: `Description exceeds ${MAX_SKILL_DESCRIPTION_LENGTH} character limit (${characterCount(description)} chars). Shorten it; it is loaded in full.`,
    });
  }

  const license = optionalString(fields, 'license', issues);
  const compatibility = optionalString(fields, 'compatibility', issues);
  if (compatibility !== undefined && characterCount(compatibility) > MAX_SKILL_COMPATIBILITY_LENGTH) {
    issues.push({
      severity: 'warning',
      code: 'SKILL_COMPATIBILITY_TOO_LONG',
      field: 'compatibility',
      message: `Compatibility exceeds ${MAX_SKILL_COMPATIBILITY_LENGTH} character limit (${characterCount(compatibility)} chars). Shorten it.`,
    });
  }
  const metadata = stringMap(fields['metadata'], issues);
  const allowedTools = toolList(fields['allowed-tools'], issues);
  for (const key of Object.keys(fields)) {
    if (KNOWN_FIELDS.has(key)) continue;
    issues.push({
      severity: 'warning',
      code: 'SKILL_UNKNOWN_FIELD',
      field: key,
      message: `Unknown frontmatter field '${key}' (the specification defines name, description, license, compatibility, metadata and allowed-tools). It is kept in metadata; move it under metadata: to silence this warning.`,
    });
    if (!(key in metadata)) metadata[key] = asString(fields[key]);
  }

  if (issues.some((issue) => issue.severity === 'error')) return { name, issues };
  return {
    name,
    issues,
    frontmatter: {
      name,
      description: description as string,
      ...(license === undefined ? {} : { license }),
      ...(compatibility === undefined ? {} : { compatibility }),
      metadata,
      allowedTools,
    },
  };
}

/** The reasons a name breaks the specification, worded like the reference validator (skills-ref). */
function nameProblems(name: string): string[] {
  const problems: string[] = [];
  const length = characterCount(name);
  if (length > MAX_SKILL_NAME_LENGTH) problems.push(`Skill name '${name}' exceeds ${MAX_SKILL_NAME_LENGTH} character limit (${length} chars)`);
  if (name !== name.toLowerCase()) problems.push(`Skill name '${name}' must be lowercase`);
  if (name.startsWith('-') || name.endsWith('-')) problems.push('Skill name cannot start or end with a hyphen');
  if (name.includes('--')) problems.push('Skill name cannot contain consecutive hyphens');
  if (!/^[A-Za-z0-9-]+$/.test(name)) {
    problems.push(`Skill name '${name}' contains invalid characters. Only lowercase letters, digits, and hyphens are allowed`);
  }
  return problems;
}

function optionalString(fields: Record<string, unknown>, field: string, issues: FrontmatterIssue[]): string | undefined {
  const value = fields[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') {
    issues.push({
      severity: 'warning',
      code: 'SKILL_FIELD_INVALID',
      field,
      message: `Field '${field}' should be a string; ${JSON.stringify(value)} was converted. Quote it.`,
    });
    return String(value);
  }
  issues.push({ severity: 'warning', code: 'SKILL_FIELD_INVALID', field, message: `Field '${field}' must be a string; it was ignored.` });
  return undefined;
}

function stringMap(value: unknown, issues: FrontmatterIssue[]): Record<string, string> {
  const result: Record<string, string> = {};
  if (value === undefined || value === null) return result;
  if (typeof value !== 'object' || Array.isArray(value)) {
    issues.push({
      severity: 'warning',
      code: 'SKILL_FIELD_INVALID',
      field: 'metadata',
      message: "Field 'metadata' must be a mapping of string keys to string values; it was ignored.",
    });
    return result;
  }
  const converted: string[] = [];
  for (const [key, entry] of Object.entries(value as Record<string, unknown>)) {
    if (typeof entry !== 'string') converted.push(key);
    result[key] = asString(entry);
  }
  if (converted.length > 0) {
    issues.push({
      severity: 'warning',
      code: 'SKILL_FIELD_INVALID',
      field: 'metadata',
      message: `Field 'metadata' must map keys to strings; the values of ${converted.map((key) => `'${key}'`).join(', ')} were converted. Quote them.`,
    });
  }
  return result;
}

function toolList(value: unknown, issues: FrontmatterIssue[]): string[] {
  if (value === undefined || value === null) return [];
  if (typeof value === 'string') return value.split(/\s+/).filter((tool) => tool.length > 0);
  if (Array.isArray(value) && value.every((tool) => typeof tool === 'string')) return value as string[];
  issues.push({
    severity: 'warning',
    code: 'SKILL_FIELD_INVALID',
    field: 'allowed-tools',
    message: "Field 'allowed-tools' must be a space-separated string of tool names; it was ignored.",
  });
  return [];
}

function asString(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === null || value === undefined || typeof value !== 'object') return String(value);
  return JSON.stringify(value);
}

/** Length in Unicode code points, as the specification counts characters. */
function characterCount(text: string): number {
  let count = 0;
  for (const _character of text) count++;
  return count;
}
