import { messageOf } from './describe-value';

/** The mark that stands in for every redacted secret. */
export const REDACTED = '***';

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

/**
 * Replaces secrets in a text with `***`, so that it can go into a trace, a
 * span or a log:
 *
 * - URL userinfo: `https://user:pass@host/` → `https://***@host/`;
 * - values of secret-looking parameters ({@link isSecretName}) in query strings
 *   and `name=value` text (`?api_key=***&page=2`), in quoted pairs
 *   (`"client_secret": "***"`) and in `name: value` pairs whose name has a
 *   `-` or `_` or is `password`, `passwd`, `pwd`, `secret`, `apikey` or
 *   `passphrase` (`X-Api-Key: ***`, `password: ***`);
 * - `Authorization:` / `Proxy-Authorization:` values (the scheme is kept:
 *   `Authorization: Bearer ***`), `Cookie:` / `Set-Cookie:` values (cookie
 *   pairs), and `Bearer …`, `Basic …`, `Token …` credentials in free text;
 * - tokens whose shape gives them away: GitHub (`ghp_…`, `github_pat_…`),
 *   `sk-…`, Slack (`xoxb-…`), AWS access key ids (`AKIA…`).
 *
 * A credential in free text is a run of at least 8 token characters with a
 * digit or one of `-._~+/=`, so that prose ("basic authentication") stays as
 * it is. Idempotent (a redacted text stays as it is) and linear in the length
 * of the text. It recognises the usual shapes of secrets, not every secret: a
 * password in plain prose stays. A non-string is described first (its message
 * or JSON).
 *
 * @throws Never.
 */
export function redactSecrets(text: string): string {
  let result = typeof text === 'string' ? text : messageOf(text);
  if (result.length === 0) return result;
  result = result.replace(AUTHORIZATION_HEADER, (match, name: string, separator: string, value: string) => {
    const scheme = AUTHORIZATION_SCHEME.exec(value);
    if (scheme !== null) return `${name}${separator}${scheme[1]}${scheme[2]}${REDACTED}`;
    // Without a scheme, only a value that looks like a credential: "authorization: failed" is prose.
    const first = /^\S+/.exec(value)?.[0] ?? '';
    return looksLikeCredential(first) ? `${name}${separator}${REDACTED}` : match;
  });
  result = result.replace(COOKIE_HEADER, (match, name: string, separator: string, value: string) =>
    value.includes('=') && value !== REDACTED ? `${name}${separator}${REDACTED}` : match,
  );
  result = result.replace(SCHEME_CREDENTIAL, (match, scheme: string, space: string, credential: string) =>
    looksLikeCredential(credential) ? `${scheme}${space}${REDACTED}` : match,
  );
  result = result.replace(KNOWN_TOKEN, REDACTED);
  result = result.replace(DOUBLE_QUOTED_PAIR, (match, name: string, separator: string) => (isSecretName(name) ? `"${name}"${separator}"${REDACTED}"` : match));
  result = result.replace(SINGLE_QUOTED_PAIR, (match, name: string, separator: string) => (isSecretName(name) ? `'${name}'${separator}'${REDACTED}'` : match));
  result = result.replace(COLON_PAIR, (match, name: string, separator: string, value: string) =>
    value !== REDACTED && !HEADERS_JUDGED_ABOVE.test(name) && (/[-_]/.test(name) || COLON_WORDS.has(name.toLowerCase())) && isSecretName(name)
      ? `${name}${separator}${REDACTED}`
      : match,
  );
  result = result.replace(EQUALS_PAIR, (match, name: string, value: string) => (value !== REDACTED && isSecretName(name) ? `${name}=${REDACTED}` : match));
  result = result.replace(URL_USERINFO, (_match, scheme: string) => `${scheme}${REDACTED}@`);
  return result;
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
