import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { describeValue } from '@ca/domain';
import { invalidArgument } from '../errors/mcp-gateway-error';

/** What a replica needs to serve a session another replica opened: carried, encrypted, in the session id. */
export interface SealedSession {
  /** The session's own id (a UUID): its plan is `mcp-<sid>` on every replica. */
  readonly sid: string;
  /** The token's client and subject that opened it, when signed in. */
  readonly owner?: string;
  /** The client's name and version, as it introduced itself. */
  readonly clientInfo?: { readonly name: string; readonly version: string };
  /** What the client declared it can do (elicitation, sampling, roots). */
  readonly capabilities?: Record<string, unknown>;
  /** The protocol version of the session. */
  readonly protocolVersion?: string;
  /** When it was opened (ms since the epoch). */
  readonly issuedAt: number;
}

const PREFIX = 'f1.';
const AAD = Buffer.from('ca-mcp-gateway-session-v1');
/** The most bytes of capabilities carried; beyond, only which capabilities the client has. */
const MAX_CAPABILITY_BYTES = 2_048;
/** The longest session id it tries to open (a sealed id is well below). */
const MAX_SEALED_LENGTH = 8_192;

/**
 * Session ids sealed with AES-256-GCM under a key every replica of a fleet
 * shares: a replica that never saw a session opens its id, checks it was
 * sealed with the key (the tag), and rebuilds the session from what it
 * carries — no shared memory, no sticky routing. A client cannot read or
 * forge one; an id sealed under another key is "not found".
 * @internal
 */
export class SessionSeal {
  private readonly key: Buffer;

  /** @param key - 32 bytes, or text (hex of 64 digits, base64 of 32 bytes, or a passphrase of ≥ 32 characters, hashed with SHA-256). */
  constructor(key: Uint8Array | string) {
    this.key = SessionSeal.keyOf(key);
  }

  /** The 32-byte key `key` stands for. @throws McpGatewayError `GATEWAY_INVALID_ARGUMENT` for a key too short. */
  static keyOf(key: Uint8Array | string): Buffer {
    if (key instanceof Uint8Array) {
      if (key.length !== 32) throw invalidArgument('fleet.key', '32 bytes (AES-256)', `${key.length} bytes`);
      return Buffer.from(key);
    }
    if (typeof key !== 'string') throw invalidArgument('fleet.key', '32 bytes, or text of them', describeValue(key));
    if (/^[0-9a-fA-F]{64}$/.test(key)) return Buffer.from(key, 'hex');
    if (/^[A-Za-z0-9+/_-]{43}=?$/.test(key)) {
      const decoded = Buffer.from(key, 'base64');
      if (decoded.length === 32) return decoded;
    }
    if (key.length >= 32) return createHash('sha256').update(key, 'utf8').digest();
    throw invalidArgument('fleet.key', '32 bytes as 64 hex digits or base64, or a passphrase of at least 32 characters', `text of ${key.length} characters`);
  }

  /** The session id that carries `session`. */
  seal(session: SealedSession): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(AAD);
    const body = Buffer.concat([cipher.update(JSON.stringify({ ...session, capabilities: fitCapabilities(session.capabilities) }), 'utf8'), cipher.final()]);
    return `${PREFIX}${Buffer.concat([iv, body, cipher.getAuthTag()]).toString('base64url')}`;
  }

  /** What `id` carries, or `undefined` when it was not sealed with this key (or is not a sealed id at all). */
  open(id: string): SealedSession | undefined {
    if (typeof id !== 'string' || !id.startsWith(PREFIX) || id.length > MAX_SEALED_LENGTH) return undefined;
    const raw = Buffer.from(id.slice(PREFIX.length), 'base64url');
    if (raw.length < 12 + 16 + 2) return undefined;
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.key, raw.subarray(0, 12));
      decipher.setAAD(AAD);
      decipher.setAuthTag(raw.subarray(raw.length - 16));
      const text = Buffer.concat([decipher.update(raw.subarray(12, raw.length - 16)), decipher.final()]).toString('utf8');
      const session = JSON.parse(text) as SealedSession;
      if (typeof session?.sid !== 'string' || typeof session.issuedAt !== 'number') return undefined;
      return session;
    } catch {
      return undefined;
    }
  }
}

/** The capabilities, or only which ones the client has when they are large (a replica needs to know whom it may ask). */
function fitCapabilities(capabilities: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
  if (capabilities === undefined) return undefined;
  const text = JSON.stringify(capabilities);
  if (text.length <= MAX_CAPABILITY_BYTES) return capabilities;
  const elicitation = capabilities['elicitation'] as Record<string, unknown> | undefined;
  return Object.fromEntries(
    Object.keys(capabilities)
      .slice(0, 20)
      .map((name) => [
        name,
        name === 'elicitation' && elicitation !== undefined
          ? { ...(elicitation['form'] === undefined ? {} : { form: {} }), ...(elicitation['url'] === undefined ? {} : { url: {} }) }
          : {},
      ]),
  );
}
