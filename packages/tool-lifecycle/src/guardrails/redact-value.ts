import type { ScanJob, SecretFinding, SecretScanner } from './secret-scanner';

/** Deepest nesting walked: deeper values are left as they are (JSON from a tool is never that deep). */
const MAX_DEPTH = 256;

/** A string of a value, where it is (to put it back) and what is scanned with it. */
interface FoundString {
  readonly text: string;
  /** `name = ` for a property's value, so that rules that need the name see it; only the value is redacted. */
  readonly prefix: string;
  readonly path: readonly (string | number)[];
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
  ) {
    this.collect(value, '', [], 0);
    this.job = scanner.job(
      this.strings.map(({ text, prefix }) => ({ text: `${prefix}${text}`, from: prefix.length })),
      candidates,
    );
  }

  /** The value with the job's findings replaced by `marker`, and the counts by rule (call once the job is done). */
  apply(marker: (ruleId: string) => string, counts: Record<string, number>): { value: unknown; total: number } {
    let result = this.value;
    let total = 0;
    this.job.results().forEach((findings: SecretFinding[], index) => {
      if (findings.length === 0) return;
      const { text, prefix, path } = this.strings[index] as FoundString;
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
    for (const [key, entry] of Object.entries(item)) this.collect(entry, typeof entry === 'string' ? `${key} = ` : '', [...path, key], depth + 1);
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
