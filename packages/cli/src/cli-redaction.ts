import fs from 'node:fs';
import path from 'node:path';
import { isSecretName, redactSecrets, urlCredentials } from '@ca/domain';
import type { CliIo } from './cli-io';

/** The mark that stands in for a secret. */
const REDACTED = '***';
/** Shorter credentials of a URL are not looked for on their own: they would turn up in ordinary words. */
const MIN_SECRET_LENGTH = 4;
/** A value kept only because its name sounds secret (`SESSION_MANAGER`, `use_auth: true`) must look like one: this long at least. */
const MIN_NAMED_SECRET_LENGTH = 8;
/** How many known secrets are kept (a configuration holds a handful). */
const MAX_SECRETS = 1_000;
/**
 * Variables whose names sound secret to {@link isSecretName} (`PWD` is a
 * common abbreviation of "password"; `*_AUTH_*`, `*_SESSION_*`) but which the
 * shell, npm and the desktop set to folders, sockets and ids: the current
 * folder is not a secret.
 */
const NOT_SECRET_VARIABLES = new Set([
  'PWD',
  'OLDPWD',
  'INIT_CWD',
  'SSH_AUTH_SOCK',
  'DBUS_SESSION_BUS_ADDRESS',
  'SESSION_MANAGER',
  'DESKTOP_SESSION',
  'XDG_SESSION_ID',
  'XDG_SESSION_TYPE',
  'XDG_SESSION_CLASS',
  'XDG_SESSION_DESKTOP',
  'XDG_SESSION_PATH',
  'GPG_AGENT_INFO',
]);
/** How deep a configuration is walked for secrets. */
const MAX_DEPTH = 12;

/**
 * What the command knows to be secret, and the one place its output passes
 * through on the way to the terminal: every line of stderr (errors, usage
 * errors, warnings, progress, questions) and every error a command prints on
 * stdout. What it hides:
 * - the credentials of anything written as a URL, malformed ones included
 *   (`redis:/user:pw@host`, an unencoded space, a trailing space), in the
 *   command's arguments (`--registry redis://…`, `--otel-endpoint …`), in the
 *   environment and in the configuration — wherever they show up later, in
 *   whatever words;
 * - the values of secret-named variables (`REDIS_PASSWORD`,
 *   `AGENTS_APPROVAL_KEY`, `*_TOKEN`, …) and of the OTLP header variables —
 *   not `PWD`, `SSH_AUTH_SOCK` and the like (folders and sockets), nor a value
 *   that is the path of an existing file or folder —, and
 *   the values of secret-named keys of the configuration (`password`,
 *   `Authorization` headers, an MCP server's `env` `API_KEY`);
 * - what {@link redactSecrets} of `@ca/domain` recognises by its shape (URL
 *   userinfo, `Bearer …`, `api_key=…`, known token formats).
 */
export class CliRedactor {
  #secrets: string[] = [];

  /** Learns the URL credentials among the command's arguments (`--registry=…` and the value after `--registry` alike). */
  learnArguments(argv: readonly string[]): this {
    for (const argument of argv) {
      if (typeof argument !== 'string') continue;
      this.#learnUrl(argument);
      const equals = argument.indexOf('=');
      if (argument.startsWith('-') && equals > 0) this.#learnUrl(argument.slice(equals + 1));
    }
    return this;
  }

  /** Learns secret-named variables, the OTLP headers' values and URL credentials of the environment. */
  learnEnvironment(env: Readonly<Record<string, string | undefined>>): this {
    for (const [name, value] of Object.entries(env)) {
      if (typeof value !== 'string' || value === '') continue;
      if (isSecretName(name) && !NOT_SECRET_VARIABLES.has(name) && !isExistingPath(value)) this.learn(value, MIN_NAMED_SECRET_LENGTH);
      if (/^OTEL_EXPORTER_OTLP_(?:TRACES_)?HEADERS$/.test(name)) {
        for (const pair of value.split(',')) this.learn(pair.slice(pair.indexOf('=') + 1), MIN_NAMED_SECRET_LENGTH);
      }
      this.#learnUrl(value);
    }
    return this;
  }

  /** Learns the values of secret-named keys and the URL credentials of a loaded configuration (any plain data). */
  learnConfiguration(config: unknown): this {
    const visit = (value: unknown, key: string | undefined, depth: number): void => {
      if (depth > MAX_DEPTH) return;
      if (typeof value === 'string') {
        if (key !== undefined && isSecretName(key) && !isExistingPath(value)) this.learn(value, MIN_NAMED_SECRET_LENGTH);
        this.#learnUrl(value);
      } else if (Array.isArray(value)) {
        for (const item of value) visit(item, key, depth + 1);
      } else if (typeof value === 'object' && value !== null) {
        for (const [name, item] of Object.entries(value)) visit(item, name, depth + 1);
      }
    };
    visit(config, undefined, 0);
    return this;
  }

  /** Learns one secret value (and, for a `user:password` pair, the password alone), when it has at least `minLength` characters. */
  learn(secret: string | undefined, minLength = MIN_SECRET_LENGTH): void {
    if (typeof secret !== 'string') return;
    const value = secret.trim();
    if (value.length < Math.max(minLength, MIN_SECRET_LENGTH) || value === REDACTED || this.#secrets.includes(value) || this.#secrets.length >= MAX_SECRETS)
      return;
    this.#secrets.push(value);
    // Longest first, so that a secret holding another is hidden whole.
    this.#secrets.sort((left, right) => right.length - left.length);
    const colon = value.indexOf(':');
    if (colon >= 0) this.learn(value.slice(colon + 1));
    if (value.includes('%')) {
      try {
        this.learn(decodeURIComponent(value));
      } catch {
        // Not percent-encoding after all.
      }
    }
  }

  /** `text` with every known secret hidden, and whatever looks like a secret by its shape. */
  redact(text: string): string {
    return redactSecrets(this.redactKnown(text));
  }

  /** `text` with every known secret hidden, nothing else changed (for data the command was asked to print). */
  redactKnown(text: string): string {
    let result = text;
    for (const secret of this.#secrets) {
      if (result.includes(secret)) result = result.split(secret).join(REDACTED);
    }
    return result;
  }

  #learnUrl(value: string): void {
    const credentials = urlCredentials(value);
    if (credentials !== undefined) this.learn(credentials);
  }
}

/**
 * Whether a value is the absolute path of a file or folder that exists: what
 * a secret-named variable holds then (`GOOGLE_APPLICATION_CREDENTIALS`, a
 * socket) is where a secret is, not the secret, and hiding it would hide
 * every path under it.
 */
function isExistingPath(value: string): boolean {
  if (!path.isAbsolute(value) || value.length > 4096 || /[\r\n\0]/.test(value)) return false;
  try {
    return fs.existsSync(value);
  } catch {
    return false;
  }
}

/** A redactor that knows the secrets of the command's arguments and environment. */
export function createCliRedactor(argv: readonly string[], env: Readonly<Record<string, string | undefined>>): CliRedactor {
  return new CliRedactor().learnArguments(argv).learnEnvironment(env);
}

/**
 * The command's streams, through the redactor: stderr — errors, usage
 * errors (commander's own included), warnings, progress and questions —
 * wholly; stdout, the data the command was asked for, with known secrets
 * hidden only.
 */
export function redactingIo(io: CliIo, redactor: CliRedactor): CliIo {
  return {
    ...io,
    stdout: (text) => io.stdout(redactor.redactKnown(text)),
    stderr: (text) => io.stderr(redactor.redact(text)),
  };
}
