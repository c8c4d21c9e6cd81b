import { ToolInvalidArgumentError } from '../errors';
import type { ToolAfterCall, ToolAfterDecision, ToolHook } from '../hooks';
import { ValueRedaction, type ShapeSettings } from './redact-value';
import { CompiledAllowlist, SecretScanner, type SecretAllowlist, type SecretRule, type SecretRuleSet } from './secret-scanner';

/** How long one slice of scanning may hold the event loop, in ms. */
const SCAN_SLICE_MS = 10;
/**
 * How long the scan of one output may take by default, in ms: an output of
 * megabytes (one the output budget keeps behind a handle) is scanned whole,
 * at about 1 MB/s where a generic rule's keyword is on every line.
 */
export const DEFAULT_SCAN_TIMEOUT_MS = 20_000;

/** Options of {@link createSecretRedactionHook}. */
export interface SecretRedactionOptions {
  /** The hook's name in traces and errors (default `'secret-redaction'`). */
  readonly name?: string;
  /** Tool-name globs of the tools whose outputs are scanned (default every tool). */
  readonly tools?: string | readonly string[];
  /** Use gitleaks' default rules (default `true`). */
  readonly gitleaks?: boolean;
  /**
   * Also redact every shape of secret that traces and logs hide (default
   * `true`): the ones `findSecrets` of `@ca/domain` finds in text — URL
   * credentials (`postgres://app:***@db`), `Authorization:` and `Cookie:`
   * values, `Bearer …` credentials, secret-named parameters (`password=…`,
   * `"api_key": "…"`, `X-Api-Key: …`), known token shapes — and the string
   * value of every secret-named key of structured output (`{ "password": … }`,
   * `token`, `apiKey`, `session`, `key`, … as `isSecretName` judges). `false`
   * keeps only gitleaks' rules and the service's own: for tools whose callers
   * must see such values (a tool that hands out connection strings).
   */
  readonly shapes?: boolean;
  /** Rules of the service's own, in gitleaks' shape (RE2 syntax), run beside gitleaks'. */
  readonly rules?: readonly SecretRule[];
  /** Findings of every rule this allowlist allows are left as they are (known test keys, …). */
  readonly allowlist?: SecretAllowlist;
  /** What stands for a redacted secret (default `[REDACTED <rule id>]`). */
  readonly marker?: (ruleId: string) => string;
  /**
   * Most characters of an output (its JSON) scanned, default 8,388,608 (8 Mi).
   * A larger output is withheld: it cannot be scanned in a time the service
   * would accept, and giving it unscanned would let a secret through.
   */
  readonly maxScanChars?: number;
  /**
   * How long the scan of one output may take, in ms (default 20,000). The scan
   * runs in slices of 10 ms, letting the event loop go on between them; an
   * output whose scan is not done in time is withheld.
   */
  readonly scanTimeoutMs?: number;
}

/** Most characters of an output the guardrail scans by default. */
export const DEFAULT_MAX_SCAN_CHARS = 8 * 1024 * 1024;

/** A value some guardrail already redacted (`***`, `[REDACTED rule]`): not a secret found again. */
function isRedacted(text: string): boolean {
  return text === '***' || /^\[REDACTED [^\]\r\n]{1,200}\]$/.test(text);
}

let gitleaks: SecretRuleSet | undefined;
function gitleaksRules(): SecretRuleSet {
  // A hundred kilobytes of rules: read when a guardrail is made, not when the package is loaded.
  gitleaks ??= (require('./gitleaks-rules') as typeof import('./gitleaks-rules')).GITLEAKS_RULES;
  return gitleaks;
}

/**
 * An output guardrail: a hook after every call (of the tools it matches)
 * that replaces secrets in the output and its content blocks — cloud keys,
 * tokens, private keys — before they reach the caller, with gitleaks' rules
 * (about 220, maintained by gitleaks; see `guardrails/gitleaks/SOURCE.md`),
 * every shape of secret traces hide (`findSecrets` of `@ca/domain`: URL
 * credentials, Authorization and Cookie values, Bearer tokens, secret-named
 * parameters, and the values of secret-named keys; `shapes: false` turns
 * these off) and any rule of the service's own. Each redaction is counted in the trace by
 * rule (`redactions`), and a note tells the model what was taken out.
 * Patterns run on a linear-time engine (re2js); a rule runs only when one of
 * its keywords is in the output. An output longer than `maxScanChars` is
 * withheld. Outputs of failed results are not scanned (error messages that
 * reach traces are redacted there).
 *
 * @throws ToolInvalidArgumentError for an option of the wrong shape or a rule whose pattern does not compile.
 */
export function createSecretRedactionHook(options: SecretRedactionOptions = {}): ToolHook {
  const {
    name = 'secret-redaction',
    tools,
    gitleaks: useGitleaks = true,
    shapes = true,
    rules = [],
    allowlist,
    marker = (ruleId: string) => `[REDACTED ${ruleId}]`,
  } = options ?? {};
  const maxScanChars = options?.maxScanChars ?? DEFAULT_MAX_SCAN_CHARS;
  const scanTimeoutMs = options?.scanTimeoutMs ?? DEFAULT_SCAN_TIMEOUT_MS;
  if (!Number.isSafeInteger(maxScanChars) || maxScanChars < 1) {
    throw new ToolInvalidArgumentError({ argument: 'maxScanChars', expected: 'a whole number of characters ≥ 1', received: maxScanChars });
  }
  if (
    !Array.isArray(rules) ||
    rules.some((rule) => typeof rule?.id !== 'string' || rule.id.length === 0 || rule.id.length > 200 || typeof rule.regex !== 'string')
  ) {
    throw new ToolInvalidArgumentError({ argument: 'rules', expected: 'a list of { id (1–200 characters), regex (RE2 syntax), … }', received: rules });
  }
  if (typeof shapes !== 'boolean') throw new ToolInvalidArgumentError({ argument: 'shapes', expected: 'true or false', received: shapes });
  if (typeof marker !== 'function') throw new ToolInvalidArgumentError({ argument: 'marker', expected: 'a function of the rule id', received: marker });
  try {
    // Compiled now, so that a broken pattern of the service is refused here and not at the first call.
    if (rules.length > 0 || allowlist !== undefined) new SecretScanner({ rules, ...(allowlist === undefined ? {} : { allowlist }) }, true);
  } catch (error) {
    throw new ToolInvalidArgumentError({ argument: 'rules', expected: 'patterns in RE2 syntax', received: rules, advice: (error as Error).message });
  }
  const base = useGitleaks ? gitleaksRules() : { rules: [] };
  const withAllowlist = (rule: SecretRule): SecretRule => (allowlist === undefined ? rule : { ...rule, allowlists: [...(rule.allowlists ?? []), allowlist] });
  // One scanner for every rule: each string is scanned once, and findings of two rules that overlap become one redaction.
  const scanner = new SecretScanner({
    rules: [...rules, ...base.rules].map(withAllowlist),
    ...(base.allowlist === undefined ? {} : { allowlist: base.allowlist }),
  });
  const shapeSettings: ShapeSettings = {
    enabled: shapes,
    isRedacted,
    allowlist: allowlist === undefined ? undefined : new CompiledAllowlist(allowlist),
  };
  if (!Number.isSafeInteger(scanTimeoutMs) || scanTimeoutMs < 1) {
    throw new ToolInvalidArgumentError({ argument: 'scanTimeoutMs', expected: 'a whole number of milliseconds ≥ 1', received: scanTimeoutMs });
  }
  return {
    name,
    ...(tools === undefined ? {} : { tools }),
    // Its own deadline is the scan's: past it the output is withheld (a clear reason) before the hook would time out.
    timeoutMs: scanTimeoutMs + 5_000,
    after({ output, content }): ToolAfterDecision | undefined | Promise<ToolAfterDecision | undefined> {
      let json: string | undefined;
      try {
        json = JSON.stringify(content === undefined ? [output] : [output, content]);
      } catch {
        // Not JSON: the runtime fails such a result itself (unserialisable output).
        return undefined;
      }
      if (json === undefined) return undefined;
      if (json.length > maxScanChars) {
        return {
          decision: 'withhold',
          reason: `the output is ${json.length} characters long, more than the ${maxScanChars} the secret guardrail scans (maxScanChars); it was not given back unscanned`,
        };
      }
      const candidates = scanner.candidates(json.toLowerCase());
      if (candidates.length === 0 && !shapes) return undefined;
      const redaction = (value: unknown) => new ValueRedaction(value, scanner, candidates, shapeSettings);
      const redactions = content === undefined ? [redaction(output)] : [redaction(output), redaction(content)];
      const finish = (): ToolAfterDecision | undefined => decide(output, content, redactions);
      const started = performance.now();
      // A slice of work at a time: an output of hostile text takes long to scan (re2js is linear but slow), and the event loop must go on meanwhile.
      const slice = (): boolean => {
        const sliceStart = performance.now();
        return redactions.every((redaction) => redaction.run(() => performance.now() - sliceStart > SCAN_SLICE_MS));
      };
      if (slice()) return finish();
      return (async () => {
        for (;;) {
          await new Promise<void>((resolve) => setImmediate(resolve));
          if (performance.now() - started > scanTimeoutMs) {
            return {
              decision: 'withhold' as const,
              reason: `the secret guardrail could not scan the output within ${scanTimeoutMs} ms (scanTimeoutMs); it was not given back unscanned`,
            };
          }
          if (slice()) return finish();
        }
      })();
    },
  };

  function decide(output: unknown, content: unknown, redactions: readonly ValueRedaction[]): ToolAfterDecision | undefined {
    const counts: Record<string, number> = {};
    const fromOutput = (redactions[0] as ValueRedaction).apply(marker, counts);
    const fromContent = redactions[1]?.apply(marker, counts);
    const total = fromOutput.total + (fromContent?.total ?? 0);
    const redactedOutput = fromOutput.value;
    const redactedContent = fromContent?.value as ToolAfterCall['content'];
    if (total === 0) return undefined;
    const kinds = Object.keys(counts).sort().join(', ');
    return {
      decision: 'redact',
      output: redactedOutput,
      ...(redactedContent === undefined ? {} : { content: redactedContent }),
      redactions: counts,
      note: `${total} value${total === 1 ? '' : 's'} that look${total === 1 ? 's' : ''} like ${total === 1 ? 'a secret' : 'secrets'} (${kinds}) ${total === 1 ? 'was' : 'were'} redacted from this output by the runtime.`,
    };
  }
}
