import { SAFE_MESSAGE_MAX_LENGTH, findSecrets, isSecretName, redactSecrets, redactUrlCredentials, safeMessage, urlCredentials } from './redact-secrets';

describe('isSecretName', () => {
  it.each([
    'key',
    'api_key',
    'apiKey',
    'APIKEY',
    'api-key',
    'X-Api-Key',
    'token',
    'access_token',
    'refreshToken',
    'id_token',
    'secret',
    'client_secret',
    'password',
    'passwd',
    'pwd',
    'pass',
    'auth',
    'Authorization',
    'signature',
    'X-Amz-Signature',
    'sig',
    'AWSAccessKeyId',
    'session',
    'sessionId',
    'jwt',
    'api%5Fkey',
    'private_key',
    'credentials',
  ])('treats %s as secret', (name) => {
    expect(isSecretName(name)).toBe(true);
  });

  it.each(['page', 'max_tokens', 'maxTokens', 'keyword', 'monkey', 'author', 'authority', 'code', 'toolName', 'planId', 'executionId', 'issues', '', 'q'])(
    'treats %s as harmless',
    (name) => {
      expect(isSecretName(name)).toBe(false);
    },
  );

  it('never throws, whatever it is given', () => {
    expect(isSecretName(undefined as unknown as string)).toBe(false);
    expect(isSecretName('%E0%A4%A')).toBe(false);
    expect(isSecretName('x'.repeat(10_000))).toBe(false);
  });
});

describe('redactSecrets', () => {
  it('redacts URL userinfo, also with an unencoded @ in the password', () => {
    expect(redactSecrets('could not reach https://alice:s3cret@example.com/path')).toBe('could not reach https://***@example.com/path');
    expect(redactSecrets('git clone ssh://git:p@ss@host.example/repo')).toBe('git clone ssh://***@host.example/repo');
    expect(redactSecrets('https://token@api.example.com')).toBe('https://***@api.example.com');
    expect(redactSecrets('mail admin@example.com about https://example.com/a?b=c')).toBe('mail admin@example.com about https://example.com/a?b=c');
  });

  it('redacts secret-looking query values, case-insensitively, and keeps the others', () => {
    expect(redactSecrets('GET https://api.example.com/v1?API_KEY=abc123&page=2&Token=xyz#top')).toBe(
      'GET https://api.example.com/v1?API_KEY=***&page=2&Token=***#top',
    );
    expect(redactSecrets('https://s3.example.com/o?X-Amz-Credential=AK%2F1&X-Amz-Signature=deadbeef&X-Amz-Expires=300')).toBe(
      'https://s3.example.com/o?X-Amz-Credential=***&X-Amz-Signature=***&X-Amz-Expires=300',
    );
    expect(redactSecrets('form body: user=bob&password=hunter2 was refused')).toBe('form body: user=bob&password=*** was refused');
    expect(redactSecrets('max_tokens=100 keyword=x')).toBe('max_tokens=100 keyword=x');
  });

  it('redacts Authorization, Cookie and bearer credentials, keeping prose', () => {
    expect(redactSecrets('Authorization: Bearer eyJhbGciOi.eyJzdWIi.c2lnbmF0dXJl')).toBe('Authorization: Bearer ***');
    expect(redactSecrets('proxy-authorization: Basic dXNlcjpwYXNz')).toBe('proxy-authorization: Basic ***');
    expect(redactSecrets('authorization=abc123def456')).toBe('authorization=***');
    expect(redactSecrets('Cookie: session=abc; theme=dark\nnext line')).toBe('Cookie: ***\nnext line');
    expect(redactSecrets('sent token ghp_0123456789abcdefghij0123456789abcdef')).toBe('sent token ***');
    expect(redactSecrets('the header was Bearer abc.def-123_456')).toBe('the header was Bearer ***');
    expect(redactSecrets('key AKIAIOSFODNN7EXAMPLE leaked')).toBe('key *** leaked');
    for (const prose of [
      'the server refused the authorization: check the credentials',
      'basic authentication failed',
      'a cookie: not set',
      'Bearer authentication is required',
      'token: expected a string',
    ]) {
      expect(redactSecrets(prose)).toBe(prose);
    }
  });

  it('redacts quoted and colon pairs with secret names', () => {
    expect(redactSecrets('{"user":"bob","client_secret":"abc\\"def","nested":{"apiKey":"k"}}')).toBe(
      '{"user":"bob","client_secret":"***","nested":{"apiKey":"***"}}',
    );
    expect(redactSecrets("{ 'password': 'it is me' }")).toBe("{ 'password': '***' }");
    expect(redactSecrets('X-Api-Key: abc123\npassword: hunter2\nsession: x')).toBe('X-Api-Key: ***\npassword: ***\nsession: x');
  });

  it('is idempotent and leaves text without secrets alone', () => {
    const text = 'GET https://u:p@h/?api_key=k Authorization: Bearer abcdefgh1 Cookie: a=b {"token":"t"}';
    const once = redactSecrets(text);
    expect(redactSecrets(once)).toBe(once);
    expect(once).not.toMatch(/u:p|=k\b|abcdefgh1|a=b|"t"/);
    const plain = "Tool 'builtin.fs.read' in plan 'p' failed: ENOENT: no such file or directory, open '/tmp/x'";
    expect(redactSecrets(plain)).toBe(plain);
  });

  it('describes non-strings instead of throwing', () => {
    expect(redactSecrets(new Error('https://a:b@h') as unknown as string)).toBe('https://***@h');
    expect(redactSecrets(42 as unknown as string)).toBe('42');
  });

  it('stays linear on hostile input (a hang guard, bounded by the test timeout)', () => {
    const hostile = [
      'a://'.repeat(50_000),
      `https://${'a'.repeat(200_000)}`,
      `${'x'.repeat(200_000)}=`,
      `"token": "${'\\'.repeat(200_001)}`,
      'authorization: '.repeat(20_000),
      '@'.repeat(200_000),
    ];
    for (const text of hostile) expect(typeof redactSecrets(text)).toBe('string');
  }, 20_000);
});

describe('findSecrets: the one list of secret shapes, for traces and for tool outputs', () => {
  const found = (text: string) => findSecrets(text).map(({ kind, start, end }) => [kind, text.slice(start, end)]);

  it('says where each secret is and what gave it away', () => {
    expect(found('connect to postgres://app:Pa55word@db/orders now')).toEqual([['url-credentials', 'app:Pa55word']]);
    expect(found('Authorization: Bearer eyJhbGciOi.eyJzdWIi')).toEqual([['authorization-header', 'eyJhbGciOi.eyJzdWIi']]);
    expect(found('Cookie: session=abc; theme=dark')).toEqual([['cookie-header', 'session=abc; theme=dark']]);
    expect(found('sent Bearer abc.def-123_456')).toEqual([['scheme-credential', 'abc.def-123_456']]);
    expect(found('key AKIAIOSFODNN7EXAMPLE')).toEqual([['known-token', 'AKIAIOSFODNN7EXAMPLE']]);
    expect(found('user=bob&password=hunter2 {"api_key": "k1"} X-Api-Key: abc')).toEqual([
      ['secret-parameter', 'hunter2'],
      ['secret-parameter', 'k1'],
      ['secret-parameter', 'abc'],
    ]);
  });

  it('merges overlapping findings, finds nothing already redacted, and nothing in prose', () => {
    expect(found('authorization=abc123def456')).toEqual([['authorization-header', 'abc123def456']]);
    expect(findSecrets('postgres://***@db/orders?password=***')).toEqual([]);
    expect(redactSecrets('token=[REDACTED github-pat] "api_key": "[REDACTED generic-api-key]"')).toBe(
      'token=[REDACTED github-pat] "api_key": "[REDACTED generic-api-key]"',
    );
    expect(findSecrets('basic authentication failed; a cookie: not set')).toEqual([]);
    expect(findSecrets(42 as never)).toEqual([]);
  });

  it('is what redactSecrets hides', () => {
    const text = 'GET https://u:pw@h/?token=t1 Authorization: Basic dXNlcjpwYXNz';
    const spans = findSecrets(text);
    let expected = '';
    let at = 0;
    for (const span of spans) {
      expected += `${text.slice(at, span.start)}***`;
      at = span.end;
    }
    expect(redactSecrets(text)).toBe(expected + text.slice(at));
    expect(spans).toHaveLength(3);
  });
});

describe('safeMessage', () => {
  it('returns a short message redacted and whole', () => {
    expect(safeMessage('failed: https://u:p@example.com/?token=t')).toBe('failed: https://***@example.com/?token=***');
  });

  it('cuts a long message at the limit and says how long it was', () => {
    const message = 'x'.repeat(8 * 1024 * 1024);
    const safe = safeMessage(message);
    expect(safe).toBe(`${'x'.repeat(SAFE_MESSAGE_MAX_LENGTH)}… [truncated, 8388608 characters in all]`);
    expect(safeMessage('abcdef', 3)).toBe('abc… [truncated, 6 characters in all]');
  });

  it('redacts a secret that straddles the cut', () => {
    const message = `${'a'.repeat(SAFE_MESSAGE_MAX_LENGTH - 20)} https://user:${'p'.repeat(100)}@example.com/ ${'b'.repeat(10_000)}`;
    const safe = safeMessage(message);
    expect(safe).not.toContain('user:');
    expect(safe).not.toContain('ppp');
    expect(safe.endsWith(`[truncated, ${message.length} characters in all]`)).toBe(true);
  });

  it('does not split a surrogate pair at the cut', () => {
    const safe = safeMessage(`ab${'😀'.repeat(10)}`, 3);
    expect(safe).toBe('ab… [truncated, 22 characters in all]');
  });

  it('falls back to the default limit for an invalid one', () => {
    for (const limit of [0, -1, 1.5, Number.NaN, Infinity]) {
      expect(safeMessage('y'.repeat(5000), limit)).toBe(`${'y'.repeat(SAFE_MESSAGE_MAX_LENGTH)}… [truncated, 5000 characters in all]`);
    }
  });
});

describe('urlCredentials and redactUrlCredentials: a value meant as a URL, malformed ones included', () => {
  it.each([
    ['redis://user:s3cret@127.0.0.1:6379/0', 'user:s3cret', 'redis://***@127.0.0.1:6379/0'],
    ['redis:/user:s3cret@127.0.0.1:6379', 'user:s3cret', 'redis:/***@127.0.0.1:6379'],
    ['redis://user:s3cret@127.0.0.1:6379 ', 'user:s3cret', 'redis://***@127.0.0.1:6379 '],
    ['redis://user:s3c ret@127.0.0.1:6379', 'user:s3c ret', 'redis://***@127.0.0.1:6379'],
    ['rediss://:p@ss/w0rd@cache.internal', ':p@ss/w0rd', 'rediss://***@cache.internal'],
    ['redis:user:s3cret@host', 'user:s3cret', 'redis:***@host'],
  ])('%j holds %j', (value, credentials, redacted) => {
    expect(urlCredentials(value)).toBe(credentials);
    expect(redactUrlCredentials(value)).toBe(redacted);
    expect(redactUrlCredentials(value)).not.toContain('s3c');
  });

  it('finds nothing in a value without a scheme or an @, and still redacts secret query values', () => {
    expect(urlCredentials('127.0.0.1:6379')).toBeUndefined();
    expect(urlCredentials('redis://127.0.0.1:6379')).toBeUndefined();
    expect(urlCredentials('user:secret@host')).toBe('secret');
    expect(urlCredentials(42 as never)).toBeUndefined();
    expect(redactUrlCredentials('https://host/x?api_key=abc123&page=2')).toBe('https://host/x?api_key=***&page=2');
  });
});
