import { findSecrets, isSecretName, type SecretKind } from '@ca/domain';
import { mergeFindings, type CompiledAllowlist, type ScanJob, type SecretFinding, type SecretScanner } from './secret-scanner';

/** Deepest nesting walked: deeper values are left as they are (JSON from a tool is never that deep). */
const MAX_DEPTH = 256;

/** A string of a value, where it is (to put it back) and what is scanned with it. */
interface FoundString {
  readonly text: string;
  /** `name = ` for a property's value, so that rules that need the name see it; only the value is redacted. */
  readonly prefix: string;
  readonly path: readonly (string | number)[];
  /** The property's name, when the string is a property's value. */
  readonly key?: string;
}

/** The rule id of a string value of a secret-named key (`{ "password": "…" }`) in structured output. */
export const SECRET_FIELD_RULE = 'secret-field';

/** The rule ids of what the shapes find: `findSecrets`' kinds and {@link SECRET_FIELD_RULE}. */
const SHAPE_RULES = new Set<string>([
  SECRET_FIELD_RULE,
  'url-credentials',
  'authorization-header',
  'cookie-header',
  'scheme-credential',
  'known-token',
  'secret-parameter',
] satisfies (SecretKind | typeof SECRET_FIELD_RULE)[]);
const isShape = (ruleId: string): boolean => SHAPE_RULES.has(ruleId);

/** How the shapes of secrets are looked for in a value. */
export interface ShapeSettings {
  /** Whether they are (the guardrail's `shapes`). */
  readonly enabled: boolean;
  /** A value some guardrail already redacted, not found again. */
  readonly isRedacted: (text: string) => boolean;
  /** The service's allowlist: a finding it allows stays. */
  readonly allowlist: CompiledAllowlist | undefined;
}

/**
 * The strings of a JSON-like value (object property values, array items,
 * nested) and the scan of them, then the value with each secret replaced:
 * only the objects and arrays on the way to a change are copied. A property's
 * string value is scanned with its name in front (`api_key = …`), so that
 * rules which need the name (gitleaks' generic rule) see structured output as
 * they see text. Property names are never redacted.
 */
export class ValueRedaction {
  private readonly strings: FoundString[] = [];
  readonly job: ScanJob;

  constructor(
    private readonly value: unknown,
    scanner: SecretScanner,
    candidates: Parameters<SecretScanner['job']>[1],
    private readonly shapes: ShapeSettings,
  ) {
    this.collect(value, '', [], 0);
    this.job = scanner.job(
      this.strings.map(({ text, prefix }) => ({ text: `${prefix}${text}`, from: prefix.length })),
      candidates,
    );
  }

  /**
   * The secrets of one string in the shapes traces hide (`findSecrets` of
   * `@ca/domain`), and the whole value of a secret-named key; positions as in
   * the scanned text (after the prefix).
   */
  private shapeFindings(found: FoundString): SecretFinding[] {
    const { enabled, isRedacted, allowlist } = this.shapes;
    if (!enabled) return [];
    const { text, prefix, key } = found;
    const allowed = (start: number, end: number): boolean => allowlist !== undefined && allowlist.allows(text.slice(start, end), text.slice(start, end), text);
    if (key !== undefined && text.length > 0 && !isRedacted(text) && isSecretName(key)) {
      return allowed(0, text.length) ? [] : [{ ruleId: SECRET_FIELD_RULE, start: prefix.length, end: prefix.length + text.length }];
    }
    return (
      findSecrets(text)
        // A guardrail's own mark (`password=[REDACTED …]`, scanned again after a hook) is not a secret.
        .filter((span) => !text.startsWith('[REDACTED ', span.start) && !allowed(span.start, span.end))
        .map((span) => ({ ruleId: span.kind, start: prefix.length + span.start, end: prefix.length + span.end }))
    );
  }

  /** The value with the job's findings replaced by `marker`, and the counts by rule (call once the job is done). */
  apply(marker: (ruleId: string) => string, counts: Record<string, number>): { value: unknown; total: number } {
    let result = this.value;
    let total = 0;
    this.job.results().forEach((byRules: SecretFinding[], index) => {
      const found = this.strings[index] as FoundString;
      const shaped = this.shapeFindings(found);
      const findings = shaped.length === 0 ? byRules : mergeFindings([...byRules, ...shaped], isShape);
      if (findings.length === 0) return;
      const { text, prefix, path } = found;
      const scanned = `${prefix}${text}`;
      let out = '';
      let at = prefix.length;
      for (const finding of findings) {
        out += scanned.slice(at, finding.start) + marker(finding.ruleId);
        at = finding.end;
        counts[finding.ruleId] = (counts[finding.ruleId] ?? 0) + 1;
        total++;
      }
      result = setAt(result, path, 0, out + scanned.slice(at), this.value);
    });
    return { value: result, total };
  }

  private collect(item: unknown, prefix: string, path: (string | number)[], depth: number): void {
    if (typeof item === 'string') {
      this.strings.push({ text: item, prefix, path });
      return;
    }
    if (typeof item !== 'object' || item === null || depth >= MAX_DEPTH) return;
    if (Array.isArray(item)) {
      item.forEach((entry, index) => this.collect(entry, '', [...path, index], depth + 1));
      return;
    }
    for (const [key, entry] of Object.entries(item)) {
      if (typeof entry === 'string') this.strings.push({ text: entry, prefix: `${key} = `, path: [...path, key], key });
      else this.collect(entry, '', [...path, key], depth + 1);
    }
  }
}

/** `root` with the value at `path` replaced, copying each container on the way that is still the original's. */
function setAt(node: unknown, path: readonly (string | number)[], depth: number, value: unknown, original: unknown): unknown {
  if (depth === path.length) return value;
  const key = path[depth] as string | number;
  const originalChild = (original as Record<string | number, unknown>)[key];
  const container = node === original ? (Array.isArray(node) ? [...node] : { ...(node as object) }) : node;
  const current = (container as Record<string | number, unknown>)[key];
  (container as Record<string | number, unknown>)[key] = setAt(current, path, depth + 1, value, originalChild);
  return container;
}
