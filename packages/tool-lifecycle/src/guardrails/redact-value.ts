import { findSecrets, isSecretName, type SecretKind } from '@ca/domain';
import { mergeFindings, type CompiledAllowlist, type ScanJob, type SecretFinding, type SecretScanner } from './secret-scanner';

/**
 * Characters of a string the shapes look at in one unit of work (a few ms),
 * how far units overlap, and how close to a later unit's start a span may
 * begin and still be its own: the unit before saw it whole when it is
 * shorter than the overlap less the edge (3.5 K characters).
 */
const SHAPE_CHUNK_CHARS = 16_384;
const SHAPE_CHUNK_OVERLAP = 4_608;
const SHAPE_CHUNK_EDGE = 1_024;

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
  /** What the shapes found in each string, as the units of {@link shapeUnits} run. */
  private readonly shaped: SecretFinding[][];
  /** The shape scan cut into units (one chunk of one string), run a slice of time at a time as the rules are. */
  private readonly shapeUnits: { readonly index: number; readonly start: number; readonly end: number }[] = [];
  private nextShape = 0;

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
    this.shaped = this.strings.map(() => []);
    if (!shapes.enabled) return;
    this.strings.forEach((found, index) => {
      const { text, prefix, key } = found;
      if (text.length === 0) return;
      if (key !== undefined && isSecretName(key)) {
        // The whole value of a secret-named key: no need to look inside it.
        if (!shapes.isRedacted(text) && !this.allowed(text, 0, text.length)) {
          (this.shaped[index] as SecretFinding[]).push({ ruleId: SECRET_FIELD_RULE, start: prefix.length, end: prefix.length + text.length });
        }
        return;
      }
      for (let start = 0; ; start += SHAPE_CHUNK_CHARS - SHAPE_CHUNK_OVERLAP) {
        const end = Math.min(text.length, start + SHAPE_CHUNK_CHARS);
        this.shapeUnits.push({ index, start, end });
        if (end >= text.length) break;
      }
    });
  }

  /** Runs the rules' units, then the shapes', until `until()` says to stop or none is left; true when both scans are complete. */
  run(until: () => boolean): boolean {
    if (!this.job.run(until)) return false;
    while (this.nextShape < this.shapeUnits.length) {
      const { index, start, end } = this.shapeUnits[this.nextShape++] as ValueRedaction['shapeUnits'][number];
      const { text, prefix } = this.strings[index] as FoundString;
      const chunk = start === 0 && end === text.length ? text : text.slice(start, end);
      const found = this.shaped[index] as SecretFinding[];
      for (const span of findSecrets(chunk)) {
        // A span that starts at the edge of a later chunk belongs to the chunk before it, which saw what precedes it (a name cut in two is not a name).
        if (start > 0 && span.start < SHAPE_CHUNK_EDGE) continue;
        const from = start + span.start;
        const to = start + span.end;
        // findSecrets skips a guardrail's own mark (`password=[REDACTED …]`, scanned again after a hook).
        if (this.allowed(text, from, to)) continue;
        found.push({ ruleId: span.kind, start: prefix.length + from, end: prefix.length + to });
      }
      if (until()) return this.nextShape >= this.shapeUnits.length;
    }
    return true;
  }

  /** Whether the service's allowlist allows the secret at `start`–`end` of `text`. */
  private allowed(text: string, start: number, end: number): boolean {
    const { allowlist } = this.shapes;
    return allowlist !== undefined && allowlist.allows(text.slice(start, end), text.slice(start, end), text);
  }

  /** The value with the job's findings replaced by `marker`, and the counts by rule (call once the job is done). */
  apply(marker: (ruleId: string) => string, counts: Record<string, number>): { value: unknown; total: number } {
    let result = this.value;
    let total = 0;
    this.job.results().forEach((byRules: SecretFinding[], index) => {
      const found = this.strings[index] as FoundString;
      const shaped = this.shaped[index] as SecretFinding[];
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
