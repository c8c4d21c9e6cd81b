import { redactSecrets } from '@ca/domain';
import fc from 'fast-check';
import { pieceEnd, redactText, redactedJson, redactedPieces, SECRET_TRIGGER, type RedactionPieces } from './redact-document';

// Fragments of text: secrets of every shape redactSecrets knows, prose that
// looks close to them, separators and line ends.
const FRAGMENTS = [
  'password=hunter2hunter2',
  '"api_key": "abc123def456"',
  "'client_secret': 'zzzz-yyyy'",
  'Authorization: Bearer abcdefgh12345678',
  'Cookie: session=abc; id=42',
  'https://user:pass@example.com/path',
  'token ghp_abcdefghijklmnopqrstuvwxyz0123456789',
  'sk-abcdefghijklmnopqrstuvwxyz12',
  'AKIAABCDEFGHIJKLMNOP',
  'X-Api-Key: 0123456789abcdef',
  '%70assword=secretvalue',
  'basic authentication is described here',
  'the keyboard and the passage',
  'plain words of a log line',
  '{"id": 1, "name": "x"}',
  ' ',
  '\n',
  '\n',
  '=',
  ':',
  '"',
  'é',
  '😀',
];

const text = fc.array(fc.constantFrom(...FRAGMENTS), { maxLength: 120 }).map((parts) => parts.join(''));
const small: RedactionPieces = { chunk: 48, window: 160 };

describe('redaction of documents in pieces', () => {
  it('redacts a text cut at line ends exactly as redactSecrets redacts it whole', () => {
    fc.assert(
      fc.property(text, (value) => {
        expect(redactText(value, small)).toBe(redactSecrets(value));
        expect([...redactedPieces(value, small)].join('')).toBe(redactSecrets(value));
      }),
      { numRuns: 500 },
    );
  });

  it('cuts a line longer than a piece only where no secret can be, and never inside a surrogate pair', () => {
    const filler = 'x'.repeat(400);
    const words = 'lorem ipsum dolor '.repeat(25);
    const line = `${filler} password=hunter2hunter2 ${words}😀${'y'.repeat(399)}😀 ${words}${filler}`;
    const cut = pieceEnd(line, 0, small);
    expect(cut).toBeGreaterThan(0);
    expect(cut).toBeLessThan(line.length);
    expect(SECRET_TRIGGER.test(line.slice(Math.max(0, cut - small.window), cut + small.window))).toBe(false);
    const before = line.charCodeAt(cut - 1);
    expect(before >= 0xd800 && before <= 0xdbff).toBe(false);
    expect([...redactedPieces(line, small)].join('')).toBe(redactSecrets(line));
  });

  it('leaves a text without trigger words untouched, returning the same string', () => {
    const plain = 'plain words of a log line\n'.repeat(50);
    expect(SECRET_TRIGGER.test(plain)).toBe(false);
    expect(redactText(plain, small)).toBe(plain);
  });

  it('redacts JSON by its values, so the JSON stays valid where redacting its text would break it', () => {
    const value = {
      header: 'Authorization: Bearer abcdefgh12\\"x',
      password: 'hunter2',
      api_key: 12345678,
      nested: [{ url: 'https://user:pass@example.com/' }, { plain: 'hello' }],
      'mirror https://user:pass@example.com/': 'a key that holds a credential',
      when: new Date('2024-01-02T03:04:05Z'),
    };
    const json = redactedJson(value);
    const parsed = JSON.parse(json) as Record<string, unknown>;
    expect(parsed['password']).toBe('***');
    expect(parsed['api_key']).toBe('***');
    expect(parsed['header']).toBe('Authorization: Bearer ***"x');
    expect((parsed['nested'] as { url: string }[])[0]?.url).toBe('https://***@example.com/');
    expect(parsed['mirror https://***@example.com/']).toBe('a key that holds a credential');
    expect(parsed['when']).toBe('2024-01-02T03:04:05.000Z');
    expect(json).not.toContain('hunter2');
    expect(json).toContain('\n  "password"');
    // The text route: the escaped quote is eaten with the credential, and the JSON breaks.
    expect(() => JSON.parse(redactSecrets(JSON.stringify(value)))).toThrow();
  });
});
