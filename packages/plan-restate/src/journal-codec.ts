import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import type { JournalValueCodec } from '@restatedev/restate-sdk';
import { DurablePlanError } from './durable-plan-error';

/** Marks an encrypted journal value: version 1, AES-256-GCM. */
const MAGIC = Buffer.from('ca1');
const IV_BYTES = 12;
const TAG_BYTES = 16;

/**
 * A Restate journal value codec that encrypts every value the SDK writes to
 * Restate — the plan's input and output, each call's journal entry and
 * outcome, the approvals — with AES-256-GCM under a key derived (SHA-256)
 * from `key`: the Restate server, its storage and its admin API then hold
 * ciphertext only. Every host of the plans must have the same key; a value
 * that does not decrypt fails the invocation (a host with the wrong key
 * cannot read the journal, and Restate retries it elsewhere).
 * @throws DurablePlanError for a key shorter than 32 bytes.
 */
export function createJournalCodec(key: string | Uint8Array): JournalValueCodec {
  const raw = typeof key === 'string' ? Buffer.from(key, 'utf8') : Buffer.from(key);
  if (raw.length < 32) {
    throw new DurablePlanError({
      code: 'DURABLE_PLAN_INVALID_ARGUMENT',
      message: `journalKey must be at least 32 bytes; got ${raw.length}.`,
      advice: "Keep a random secret of 32 bytes or more in the service's secret store, the same on every host.",
    });
  }
  const secret = createHash('sha256').update(raw).digest();
  return {
    encode(buffer: Uint8Array): Uint8Array {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv('aes-256-gcm', secret, iv);
      const body = Buffer.concat([cipher.update(buffer), cipher.final()]);
      return Buffer.concat([MAGIC, iv, cipher.getAuthTag(), body]);
    },
    decode(buffer: Uint8Array): Promise<Uint8Array> {
      const value = Buffer.from(buffer);
      // Values written before the key was set (or empty ones) pass as they are.
      if (value.length < MAGIC.length + IV_BYTES + TAG_BYTES || !value.subarray(0, MAGIC.length).equals(MAGIC)) return Promise.resolve(buffer);
      const iv = value.subarray(MAGIC.length, MAGIC.length + IV_BYTES);
      const tag = value.subarray(MAGIC.length + IV_BYTES, MAGIC.length + IV_BYTES + TAG_BYTES);
      const decipher = createDecipheriv('aes-256-gcm', secret, iv);
      decipher.setAuthTag(tag);
      return Promise.resolve(Buffer.concat([decipher.update(value.subarray(MAGIC.length + IV_BYTES + TAG_BYTES)), decipher.final()]));
    },
  } as JournalValueCodec;
}
