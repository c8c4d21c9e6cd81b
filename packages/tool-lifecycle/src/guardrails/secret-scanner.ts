import { RE2JS } from 're2js';

/**
 * What a secret rule may exclude from its findings (gitleaks' allowlist): a
 * finding is allowed — not a secret — when one of `regexes` matches its
 * target (the secret by default, the whole match, or its line), or the secret
 * contains one of `stopwords` (case-insensitive).
 */
export interface SecretAllowlist {
  readonly regexTarget?: 'secret' | 'match' | 'line';
  /** RE2 syntax. */
  readonly regexes?: readonly string[];
  readonly stopwords?: readonly string[];
}

/**
 * A rule that finds one kind of secret, in the shape of a gitleaks rule: a
 * regular expression in RE2 syntax (run on a linear-time engine), the group
 * that holds the secret (default: the first group that matched, else the
 * whole match), the Shannon entropy the secret must exceed, keywords one of
 * which must appear in the text (case-insensitive) for the rule to run at
 * all, and allowlists of known false positives.
 */
export interface SecretRule {
  /** Names the rule in traces (`aws-access-token`); 1–200 characters. */
  readonly id: string;
  readonly description?: string;
  readonly regex: string;
  readonly secretGroup?: number;
  readonly entropy?: number;
  readonly keywords?: readonly string[];
  readonly allowlists?: readonly SecretAllowlist[];
}

/** Rules and the allowlist that applies to all of them. */
export interface SecretRuleSet {
  readonly rules: readonly SecretRule[];
  readonly allowlist?: SecretAllowlist;
}

/** One secret found: where it is in the text, and which rule found it. */
export interface SecretFinding {
  readonly ruleId: string;
  readonly start: number;
  readonly end: number;
}

/** An allowlist compiled (RE2). */
export class CompiledAllowlist {
  private readonly regexes: readonly RE2JS[];
  private readonly stopwords: readonly string[];
  private readonly target: 'secret' | 'match' | 'line';

  constructor(allowlist: SecretAllowlist) {
    this.regexes = (allowlist.regexes ?? []).map((pattern) => RE2JS.compile(pattern));
    this.stopwords = (allowlist.stopwords ?? []).map((word) => word.toLowerCase());
    this.target = allowlist.regexTarget ?? 'secret';
  }

  allows(secret: string, match: string, line: string): boolean {
    const target = this.target === 'match' ? match : this.target === 'line' ? line : secret;
    if (target.length > 0 && this.regexes.some((regex) => regex.matcher(target).find())) return true;
    if (this.stopwords.length === 0 || secret.length === 0) return false;
    const lower = secret.toLowerCase();
    return this.stopwords.some((word) => lower.includes(word));
  }
}

/** A rule, its pattern and allowlists compiled on first use (most rules never run: their keywords are absent). */
class CompiledRule {
  readonly id: string;
  readonly keywords: readonly string[];
  private compiled: { readonly regex: RE2JS; readonly allowlists: readonly CompiledAllowlist[] } | undefined;

  constructor(private readonly rule: SecretRule) {
    this.id = rule.id;
    this.keywords = (rule.keywords ?? []).map((keyword) => keyword.toLowerCase());
  }

  /** Compiles now (for rules given by the service: a broken one is refused when the guardrail is made). */
  compile(): this {
    this.compiled ??= {
      regex: RE2JS.compile(this.rule.regex),
      allowlists: (this.rule.allowlists ?? []).map((allowlist) => new CompiledAllowlist(allowlist)),
    };
    return this;
  }

  applies(lower: string): boolean {
    return this.keywords.length === 0 || this.keywords.some((keyword) => lower.includes(keyword));
  }

  /** Every finding of the rule in `text` whose secret ends after `from`, passing its entropy and the allowlists. */
  find(text: string, from: number, global: CompiledAllowlist | undefined, found: SecretFinding[]): void {
    const { regex, allowlists } = this.compile().compiled as NonNullable<CompiledRule['compiled']>;
    const matcher = regex.matcher(text);
    let position = 0;
    while (position <= text.length && matcher.find(position)) {
      const start = matcher.start();
      const end = matcher.end();
      position = end > start ? end : end + 1;
      let secretStart = start;
      let secretEnd = end;
      const groups = matcher.groupCount();
      if (groups > 0) {
        const wanted = this.rule.secretGroup;
        if (wanted !== undefined && wanted > 0) {
          if (wanted > groups || matcher.start(wanted) < 0) continue;
          secretStart = matcher.start(wanted);
          secretEnd = matcher.end(wanted);
        } else {
          for (let group = 1; group <= groups; group++) {
            const groupStart = matcher.start(group);
            if (groupStart >= 0 && matcher.end(group) > groupStart) {
              secretStart = groupStart;
              secretEnd = matcher.end(group);
              break;
            }
          }
        }
      }
      if (secretEnd <= secretStart || secretEnd <= from) continue;
      const secret = text.slice(secretStart, secretEnd);
      if (this.rule.entropy !== undefined && this.rule.entropy !== 0 && shannonEntropy(secret) <= this.rule.entropy) continue;
      const match = text.slice(start, end);
      const line = lineAround(text, start, end);
      if (global?.allows(secret, match, line) === true || allowlists.some((allowlist) => allowlist.allows(secret, match, line))) continue;
      found.push({ ruleId: this.id, start: Math.max(secretStart, from), end: secretEnd });
    }
  }
}

/**
 * Finds secrets in text with a rule set such as gitleaks': keywords first
 * (one lower-casing of the text, then a substring test per keyword), then
 * each rule whose keyword appears runs its pattern on re2js, in time linear
 * in the length of the text. Findings that overlap are merged.
 */
export class SecretScanner {
  private readonly rules: readonly CompiledRule[];
  private readonly global: CompiledAllowlist | undefined;
  /**
   * Matches where any rule's keyword appears, when every rule has keywords:
   * one pass over a text rules out the usual output that holds none of them,
   * instead of one `includes` per keyword (the gitleaks rules have about 240).
   */
  private readonly anyKeyword: RegExp | undefined;

  /**
   * @param eager - compile every pattern now (a broken one throws here), for rules the service wrote.
   * @throws Error from re2js for a pattern that does not compile, when `eager`.
   */
  constructor(ruleSet: SecretRuleSet, eager = false) {
    this.rules = ruleSet.rules.map((rule) => (eager ? new CompiledRule(rule).compile() : new CompiledRule(rule)));
    this.global = ruleSet.allowlist === undefined ? undefined : new CompiledAllowlist(ruleSet.allowlist);
    this.anyKeyword = anyKeywordPattern(this.rules);
  }

  /** The rules whose keywords appear in `lower` (a lower-cased text): the ones worth running on it. */
  candidates(lower: string): readonly CompiledRule[] {
    if (this.anyKeyword !== undefined && !this.anyKeyword.test(lower)) return [];
    return this.rules.filter((rule) => rule.applies(lower));
  }

  /** A scan of `strings` (each scanned from its `from` on) with the rules whose keywords appear in each. */
  job(strings: readonly { readonly text: string; readonly from: number }[], rules: readonly CompiledRule[] = this.rules): ScanJob {
    return new ScanJob(strings, rules, this.global);
  }

  /**
   * The secrets in `text` (from `from` on: a prefix before it gives context
   * only), sorted and merged where they overlap.
   */
  scan(text: string, rules: readonly CompiledRule[] = this.rules, from = 0): SecretFinding[] {
    if (text.length === 0) return [];
    const lower = text.toLowerCase();
    const found: SecretFinding[] = [];
    for (const rule of rules) if (rule.applies(lower)) rule.find(text, from, this.global, found);
    return mergeFindings(found);
  }
}

/**
 * One pattern of every keyword of `rules` (literals, longest first, no
 * quantifiers: linear in the text), or `undefined` when a rule has none (it
 * applies to every text, so no text can be ruled out at once).
 */
function anyKeywordPattern(rules: readonly CompiledRule[]): RegExp | undefined {
  if (rules.length === 0 || rules.some((rule) => rule.keywords.length === 0)) return undefined;
  const keywords = [...new Set(rules.flatMap((rule) => rule.keywords))].sort((left, right) => right.length - left.length);
  return new RegExp(keywords.map((keyword) => keyword.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')).join('|'));
}

/**
 * Characters of a string one rule scans at a time (about 10 ms of re2js on
 * this machine's hardest rule), and how far chunks overlap (longer than the
 * longest secret a rule finds whole: a 4096-bit RSA private key is about
 * 3,300): each character is scanned 1⅓ times.
 */
export const SCAN_CHUNK_CHARS = 16_384;
export const SCAN_CHUNK_OVERLAP = 4_096;

/**
 * A scan of many strings cut into units of work (one rule over one chunk of
 * one string), so that a caller can run it a slice of time at a time and
 * stop at a deadline: re2js is linear, but slow on long hostile text.
 */
export class ScanJob {
  readonly findings: SecretFinding[][];
  private readonly units: { readonly index: number; readonly rule: CompiledRule; readonly start: number; readonly end: number; readonly from: number }[] = [];
  private next = 0;

  constructor(
    private readonly strings: readonly { readonly text: string; readonly from: number }[],
    rules: readonly CompiledRule[],
    private readonly global: CompiledAllowlist | undefined,
  ) {
    this.findings = strings.map(() => []);
    strings.forEach(({ text, from }, index) => {
      if (text.length === 0) return;
      const lower = text.toLowerCase();
      for (const rule of rules) {
        if (!rule.applies(lower)) continue;
        for (let start = 0; ; start += SCAN_CHUNK_CHARS - SCAN_CHUNK_OVERLAP) {
          const end = Math.min(text.length, start + SCAN_CHUNK_CHARS);
          this.units.push({ index, rule, start, end, from });
          if (end >= text.length) break;
        }
      }
    });
  }

  get done(): boolean {
    return this.next >= this.units.length;
  }

  /** Runs units until `until()` says to stop or none is left; true when the scan is complete. */
  run(until: () => boolean): boolean {
    while (this.next < this.units.length) {
      const unit = this.units[this.next++] as ScanJob['units'][number];
      const text = (this.strings[unit.index] as { text: string }).text;
      const chunk = unit.start === 0 && unit.end === text.length ? text : text.slice(unit.start, unit.end);
      const found: SecretFinding[] = [];
      unit.rule.find(chunk, Math.max(0, unit.from - unit.start), this.global, found);
      for (const finding of found)
        (this.findings[unit.index] as SecretFinding[]).push({ ruleId: finding.ruleId, start: finding.start + unit.start, end: finding.end + unit.start });
      if (until()) return this.done;
    }
    return true;
  }

  /** The findings of each string, sorted and merged. */
  results(): SecretFinding[][] {
    return this.findings.map((found) => mergeFindings(found));
  }
}

/** Sorted by start; a finding inside or across an earlier one extends it (the first rule keeps the count). */
export function mergeFindings(found: SecretFinding[], isShape: (ruleId: string) => boolean = () => false): SecretFinding[] {
  if (found.length < 2) return found;
  // At the same place, a rule of one kind of secret names it better than a generic one, and any rule better than a shape (`url-credentials`, `secret-field`).
  const generic = (finding: SecretFinding): number => (isShape(finding.ruleId) ? 2 : finding.ruleId.startsWith('generic') ? 1 : 0);
  found.sort((a, b) => a.start - b.start || b.end - a.end || generic(a) - generic(b));
  const merged: SecretFinding[] = [];
  for (const finding of found) {
    const last = merged[merged.length - 1];
    if (last !== undefined && finding.start < last.end) {
      if (finding.end > last.end) merged[merged.length - 1] = { ruleId: last.ruleId, start: last.start, end: finding.end };
      continue;
    }
    merged.push(finding);
  }
  return merged;
}

/** The line (or lines) the match is on, as gitleaks' `line` allowlist target. */
function lineAround(text: string, start: number, end: number): string {
  const lineStart = text.lastIndexOf('\n', start - 1) + 1;
  const newline = text.indexOf('\n', end);
  return text.slice(lineStart, newline < 0 ? text.length : newline);
}

/** Shannon entropy in bits per character, as gitleaks computes it. */
export function shannonEntropy(text: string): number {
  if (text.length === 0) return 0;
  const counts = new Map<number, number>();
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    counts.set(code, (counts.get(code) ?? 0) + 1);
  }
  let entropy = 0;
  for (const count of counts.values()) {
    const frequency = count / text.length;
    entropy -= frequency * Math.log2(frequency);
  }
  return entropy;
}
