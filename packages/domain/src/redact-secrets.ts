import { messageOf } from './describe-value';

/** The mark that stands in for every redacted secret. */
export const REDACTED = '***';

/** How the output guardrail of `@ca/tool-lifecycle` marks what it redacted (`[REDACTED github-pat]`). */
const GUARDRAIL_MARK = '[REDACTED ';

/** Longest message {@link safeMessage} keeps by default, in characters (4 KiB). */
export const SAFE_MESSAGE_MAX_LENGTH = 4096;

// How far past the cut safeMessage still redacts, so that a secret that starts
// before the cut and ends after it is recognised whole and does not leak its head.
const REDACTION_LOOKAHEAD = 2048;

// Every pattern below is linear: bounded repetitions, disjoint alternatives, and
// runs that cannot start inside one another, so hostile text cannot make them
// backtrack for long.

// `scheme://userinfo@`: everything up to the last `@` of the authority.
const URL_USERINFO = /\b([a-z][a-z0-9+.-]{0,30}:\/\/)[^\s/?#"'<>@]{0,4096}(?:@[^\s/?#"'<>@]{0,4096})*@/gi;
// `Authorization: …`, `Proxy-Authorization=…`: judged by the value (see redactSecrets).
const AUTHORIZATION_HEADER = /(?<![\w-])((?:proxy-)?authorization)([ \t]{0,8}[:=][ \t]{0,8})([^\s"'<>][^\r\n"'<>]{0,4096})/gi;
// Schemes of the Authorization header, kept in front of the redacted credentials.
const AUTHORIZATION_SCHEME =
  /^(bearer|basic|digest|negotiate|ntlm|token|apikey|api-key|hawk|oauth|dpop|aws4-hmac-sha256|sharedkey|signature|ssws|key)([ \t]+)\S/i;
// `Cookie: a=b; c=d`, `Set-Cookie: …`: every cookie, to the end of the line.
const COOKIE_HEADER = /(?<![\w-])((?:set-)?cookie)([ \t]{0,8}:[ \t]{0,8})([^\s"'<>][^\r\n"'<>]{0,4096})/gi;
// `Bearer <credential>` and the like in free text.
const SCHEME_CREDENTIAL = /(?<![\w-])(bearer|basic|token|apikey)([ \t]+)([A-Za-z0-9._~+/-]{8,4096}=*)/gi;
// Tokens whose shape gives them away wherever they appear: GitHub, OpenAI-style `sk-`, Slack, AWS access key ids.
const KNOWN_TOKEN =
  /(?<![\w-])(?:gh[pousr]_[A-Za-z0-9]{20,255}|github_pat_[A-Za-z0-9_]{20,255}|sk-[A-Za-z0-9_-]{20,255}|xox[abpors]-[A-Za-z0-9-]{10,255}|AKIA[0-9A-Z]{16})(?![\w-])/g;
// `"name": "value"` and `'name': 'value'` (JSON, JavaScript literals).
const DOUBLE_QUOTED_PAIR = /"([\w.$-]{1,100})"([ \t]{0,8}:[ \t]{0,8})"(?:[^"\\\r\n]|\\.){0,4096}"/g;
const SINGLE_QUOTED_PAIR = /'([\w.$-]{1,100})'([ \t]{0,8}:[ \t]{0,8})'(?:[^'\\\r\n]|\\.){0,4096}'/g;
// `name: value` (headers, YAML): only names that cannot be prose (see COLON_WORDS).
const COLON_PAIR = /(?<![\w.-])([A-Za-z][\w.-]{0,100})([ \t]{0,8}:[ \t]{0,8})([^\s"'<>,;]{1,4096})/g;
// `name=value` (query strings, form bodies, `key=value` text).
const EQUALS_PAIR = /(?<![\w.%[\]-])([\w.%[\]-]{1,100})=([^&#\s"'<>;]{1,4096})/g;

// A word of a parameter name (split at separators and camelCase humps) that
// marks its value as secret: `api_key`, `apiKey`, `X-Amz-Signature`, `client_secret`,
// `access_token`, `AWSAccessKeyId`… but not `max_tokens` or `keyword`.
const SECRET_WORD =
  /^(?:[a-z0-9]{0,40}(?:token|secrets?|passwords?|passwd|passphrase|apikeys?|privatekey|secretkey|accesskey|signingkey|signature|credentials?)|key|pass|pwd|auth|authorization|sig|jwt|bearer|cookie|session|sessionid|otp)$/;
// Headers whose values were judged by their own patterns (which keep an Authorization scheme).
const HEADERS_JUDGED_ABOVE = /^(?:(?:proxy-)?authorization|(?:set-)?cookie)$/i;
// Names whose `name: value` form is not mistaken for prose even without a separator.
const COLON_WORDS = new Set(['password', 'passwd', 'pwd', 'secret', 'apikey', 'passphrase']);

/**
 * Whether a parameter or field name looks like it holds a secret: one of its
 * words (split at `_`, `-`, `.` and camelCase humps, case-insensitive) is `key`,
 * `pass`, `pwd`, `auth`, `sig`, `jwt`, `bearer`, `cookie`, `session`,
 * `sessionid` or `otp`, or ends with `token`, `secret`, `password`, `passwd`,
 * `passphrase`, `apikey`, `privatekey`, `secretkey`, `accesskey`, `signingkey`,
 * `signature` or `credential(s)`.
 *
 * @throws Never.
 */
export function isSecretName(name: string): boolean {
  if (typeof name !== 'string' || name.length === 0 || name.length > 200) return false;
  let decoded = name;
  if (name.includes('%')) {
    try {
      decoded = decodeURIComponent(name);
    } catch {
      // Not valid percent-encoding: judge the name as written.
    }
  }
  const words = decoded
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/);
  return words.some((word) => word.length > 0 && SECRET_WORD.test(word));
}

/** What kind of secret {@link findSecrets} found: the form that gave it away. */
export type SecretKind =
  /** The userinfo of a URL: `postgres://app:pw@db/orders`. */
  | 'url-credentials'
  /** The credentials of an `Authorization:` or `Proxy-Authorization:` value. */
  | 'authorization-header'
  /** The cookies of a `Cookie:` or `Set-Cookie:` value. */
  | 'cookie-header'
  /** `Bearer …`, `Basic …`, `Token …`, `ApiKey …` in free text. */
  | 'scheme-credential'
  /** A token whose shape gives it away: GitHub, `sk-…`, Slack, AWS access key id. */
  | 'known-token'
  /** The value of a secret-named parameter ({@link isSecretName}): `password=…`, `"api_key": "…"`, `X-Api-Key: …`. */
  | 'secret-parameter';

/** One secret {@link findSecrets} found: the characters `start` (inclusive) to `end` (exclusive) of the text. */
export interface SecretSpan {
  readonly kind: SecretKind;
  readonly start: number;
  readonly end: number;
}

/**
 * Where the secrets of a text are, in the forms traces, logs and (through the
 * output guardrail of `@ca/tool-lifecycle`) tool outputs hide:
 *
 * - URL userinfo: `https://user:pass@host/` (the part before the last `@`);
 * - values of secret-looking parameters ({@link isSecretName}) in query strings
 *   and `name=value` text (`?api_key=…&page=2`), in quoted pairs
 *   (`"client_secret": "…"`) and in `name: value` pairs whose name has a
 *   `-` or `_` or is `password`, `passwd`, `pwd`, `secret`, `apikey` or
 *   `passphrase` (`X-Api-Key: …`, `password: …`);
 * - `Authorization:` / `Proxy-Authorization:` values (after the scheme:
 *   `Authorization: Bearer …`), `Cookie:` / `Set-Cookie:` values (cookie
 *   pairs), and `Bearer …`, `Basic …`, `Token …` credentials in free text;
 * - tokens whose shape gives them away: GitHub (`ghp_…`, `github_pat_…`),
 *   `sk-…`, Slack (`xoxb-…`), AWS access key ids (`AKIA…`).
 *
 * A credential in free text is a run of at least 8 token characters with a
 * digit or one of `-._~+/=`, so that prose ("basic authentication") stays as
 * it is. A value that is already `***` or starts with the output
 * guardrail's mark (`[REDACTED github-pat]`) is not found again. The spans are
 * sorted and do not overlap (overlapping findings are merged; the first
 * kind is kept). Linear in the length of the text. It recognises the usual
 * shapes of secrets, not every secret: a password in plain prose stays.
 *
 * @throws Never.
 */
export function findSecrets(text: string): SecretSpan[] {
  if (typeof text !== 'string' || text.length === 0) return [];
  const found: SecretSpan[] = [];
  // Names come back again and again (`a=1&a=2&…`): each is judged once per text, at most 1,000 kept.
  const judged = new Map<string, boolean>();
  const isSecret = (name: string): boolean => {
    let secret = judged.get(name);
    if (secret === undefined) {
      secret = isSecretName(name);
      if (judged.size < 1_000) judged.set(name, secret);
    }
    return secret;
  };
  const add = (kind: SecretKind, start: number, end: number): void => {
    // What is already redacted — `***`, or the `[REDACTED rule]` mark of the output guardrail — is not a secret found again.
    if (end > start && text.slice(start, end) !== REDACTED && !text.startsWith(GUARDRAIL_MARK, start)) found.push({ kind, start, end });
  };
  // Each pattern's groups, with where they start (the `d` flag).
  const each = (pattern: RegExp, visit: (match: RegExpExecArray, starts: readonly number[]) => void): void => {
    const regex = withIndices(pattern);
    regex.lastIndex = 0;
    for (let match = regex.exec(text); match !== null; match = regex.exec(text)) {
      if (match[0].length === 0) regex.lastIndex++;
      const indices = match.indices as RegExpIndicesArray;
      visit(
        match,
        indices.map((pair) => (pair === undefined ? -1 : pair[0])),
      );
    }
  };
  each(AUTHORIZATION_HEADER, (match, starts) => {
    const value = match[3] as string;
    const valueStart = starts[3] as number;
    const scheme = AUTHORIZATION_SCHEME.exec(value);
    if (scheme !== null) {
      add('authorization-header', valueStart + (scheme[1] as string).length + (scheme[2] as string).length, valueStart + value.length);
      return;
    }
    // Without a scheme, only a value that looks like a credential: "authorization: failed" is prose.
    const first = /^\S+/.exec(value)?.[0] ?? '';
    if (looksLikeCredential(first)) add('authorization-header', valueStart, valueStart + value.length);
  });
  each(COOKIE_HEADER, (match, starts) => {
    const value = match[3] as string;
    if (value.includes('=')) add('cookie-header', starts[3] as number, (starts[3] as number) + value.length);
  });
  each(SCHEME_CREDENTIAL, (match, starts) => {
    const credential = match[3] as string;
    if (looksLikeCredential(credential)) add('scheme-credential', starts[3] as number, (starts[3] as number) + credential.length);
  });
  each(KNOWN_TOKEN, (match) => add('known-token', match.index, match.index + match[0].length));
  for (const pattern of [DOUBLE_QUOTED_PAIR, SINGLE_QUOTED_PAIR]) {
    each(pattern, (match, starts) => {
      if (!isSecret(match[1] as string)) return;
      // The value between its quotes: after the name, the separator and the opening quote, before the closing one.
      const valueStart = (starts[2] as number) + (match[2] as string).length + 1;
      add('secret-parameter', valueStart, match.index + match[0].length - 1);
    });
  }
  each(COLON_PAIR, (match, starts) => {
    const name = match[1] as string;
    if (!HEADERS_JUDGED_ABOVE.test(name) && (/[-_]/.test(name) || COLON_WORDS.has(name.toLowerCase())) && isSecret(name)) {
      add('secret-parameter', starts[3] as number, (starts[3] as number) + (match[3] as string).length);
    }
  });
  each(EQUALS_PAIR, (match, starts) => {
    if (isSecret(match[1] as string)) add('secret-parameter', starts[2] as number, (starts[2] as number) + (match[2] as string).length);
  });
  each(URL_USERINFO, (match, starts) => add('url-credentials', (starts[1] as number) + (match[1] as string).length, match.index + match[0].length - 1));
  return mergeSpans(found);
}

// The patterns with the `d` flag (where each group starts), made once.
const WITH_INDICES = new Map<RegExp, RegExp>();
function withIndices(pattern: RegExp): RegExp {
  let regex = WITH_INDICES.get(pattern);
  if (regex === undefined) {
    regex = new RegExp(pattern.source, `${pattern.flags}d`);
    WITH_INDICES.set(pattern, regex);
  }
  return regex;
}

/** Sorted by start; a span inside or across an earlier one extends it. */
function mergeSpans(found: SecretSpan[]): SecretSpan[] {
  if (found.length < 2) return found;
  found.sort((left, right) => left.start - right.start || right.end - left.end);
  const merged: SecretSpan[] = [];
  for (const span of found) {
    const last = merged[merged.length - 1];
    if (last !== undefined && span.start < last.end) {
      if (span.end > last.end) merged[merged.length - 1] = { kind: last.kind, start: last.start, end: span.end };
      continue;
    }
    merged.push(span);
  }
  return merged;
}

/**
 * Replaces secrets in a text with `***`, so that it can go into a trace, a
 * span or a log: every span {@link findSecrets} finds (URL userinfo —
 * `https://***@host/` —, secret-named parameters — `?api_key=***&page=2` —,
 * `Authorization: Bearer ***`, `Cookie: ***`, known token shapes).
 * Idempotent (a redacted text stays as it is) and linear in the length of the
 * text. A non-string is described first (its message or JSON).
 *
 * @throws Never.
 */
export function redactSecrets(text: string): string {
  const source = typeof text === 'string' ? text : messageOf(text);
  const spans = findSecrets(source);
  if (spans.length === 0) return source;
  let result = '';
  let at = 0;
  for (const span of spans) {
    result += source.slice(at, span.start) + REDACTED;
    at = span.end;
  }
  return result + source.slice(at);
}

// `scheme:` at the start of a value meant as a URL, then up to three slashes.
const URL_SCHEME_PREFIX = /^\s*[a-z][a-z0-9+.-]{0,30}:\/{0,3}/i;

/**
 * The credentials of a value meant as a URL, as written — `user:secret` of
 * `redis://user:secret@host` — also when the URL is malformed:
 * `redis:/user:secret@host` (one slash), an unencoded space
 * (`redis://user:sec ret@host`), a `/` or `@` in the password, a trailing
 * space. Everything after the scheme up to the last `@` counts, so for a
 * value that is not a URL with credentials (`https://host/a@b`) a little more
 * than the userinfo may be taken: what this finds is for hiding, never for
 * use. `undefined` when the value does not start with a scheme or holds no `@`.
 *
 * @throws Never.
 */
export function urlCredentials(value: string): string | undefined {
  if (typeof value !== 'string' || value.length > 65_536) return undefined;
  const prefix = URL_SCHEME_PREFIX.exec(value);
  if (prefix === null) return undefined;
  const at = value.lastIndexOf('@');
  if (at <= prefix[0].length) return undefined;
  return value.slice(prefix[0].length, at);
}

/**
 * A value meant as a URL with its credentials ({@link urlCredentials}) replaced
 * by `***` — `redis:/***@host` — whether or not it parses, then
 * {@link redactSecrets} (secret query values). For messages that quote a URL a
 * person gave, malformed ones included.
 *
 * @throws Never.
 */
export function redactUrlCredentials(value: string): string {
  const text = typeof value === 'string' ? value : messageOf(value);
  const credentials = urlCredentials(text);
  if (credentials === undefined) return redactSecrets(text);
  const start = (URL_SCHEME_PREFIX.exec(text) as RegExpExecArray)[0].length;
  return redactSecrets(`${text.slice(0, start)}${REDACTED}${text.slice(start + credentials.length)}`);
}

/** A run of at least 8 token characters with a digit or a symbol: a credential, not a word of prose. */
function looksLikeCredential(text: string): boolean {
  return text.length >= 8 && text !== REDACTED && /^[A-Za-z0-9._~+/=-]+$/.test(text) && /[\d._~+/=-]/.test(text);
}

/**
 * A message as it may be recorded in a trace, a span or a log: secrets
 * redacted ({@link redactSecrets}) and at most `maxLength` characters
 * (default {@link SAFE_MESSAGE_MAX_LENGTH}, 4 KiB), a longer one cut and
 * followed by `… [truncated, N characters in all]`, where N is the length of
 * the original. Only the part that is kept is redacted (plus a little past the
 * cut), so an 8 MB message costs what 4 KiB cost. A `maxLength` that is not an
 * integer ≥ 1 counts as the default; a non-string is described first.
 *
 * @throws Never.
 */
export function safeMessage(text: string, maxLength: number = SAFE_MESSAGE_MAX_LENGTH): string {
  const message = typeof text === 'string' ? text : messageOf(text);
  const limit = Number.isSafeInteger(maxLength) && maxLength >= 1 ? maxLength : SAFE_MESSAGE_MAX_LENGTH;
  if (message.length <= limit) return redactSecrets(message);
  const sliced = message.length > limit + REDACTION_LOOKAHEAD;
  const head = redactSecrets(sliced ? message.slice(0, limit + REDACTION_LOOKAHEAD) : message);
  if (!sliced && head.length <= limit) return head;
  return `${cutAt(head, Math.min(limit, head.length))}… [truncated, ${message.length} characters in all]`;
}

/** The first `length` characters, one fewer when the cut would split a surrogate pair. */
function cutAt(text: string, length: number): string {
  const last = text.charCodeAt(length - 1);
  return text.slice(0, last >= 0xd800 && last <= 0xdbff ? length - 1 : length);
}
