import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * The keys a replica signs with, derived from the fleet's key as
 * `SessionSeal.keyOf` reads it (the same 32 bytes however the key is
 * written), one per purpose, so that a signature made for one purpose is
 * never taken for another.
 */
export function derivedKey(fleetKey: Buffer, purpose: string): Buffer {
  return createHmac('sha256', fleetKey).update(purpose, 'utf8').digest();
}

/** HMAC-SHA-256 of a text under a key. */
export function macOf(key: Buffer, text: string): Buffer {
  return createHmac('sha256', key).update(text, 'utf8').digest();
}

/** Whether `given` (base64url, as it came in) is the MAC `expected`, compared in constant time. */
export function macMatches(given: string, expected: Buffer): boolean {
  const bytes = Buffer.from(given, 'base64url');
  return bytes.length === expected.length && timingSafeEqual(bytes, expected);
}
