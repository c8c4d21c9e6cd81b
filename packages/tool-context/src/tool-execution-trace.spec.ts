import { ToolCancelledError } from './tool-cancelled-error';
import { freezeTrace, toTraceError, toTraceRepairs } from './tool-execution-trace';

describe('toTraceError', () => {
  it('returns undefined when there is no error', () => {
    expect(toTraceError(undefined)).toBeUndefined();
  });

  it('keeps name, string code and message of an error', () => {
    expect(toTraceError(new ToolCancelledError({ reason: 'timed out after 5 ms' }))).toEqual({
      name: 'ToolCancelledError',
      code: 'TOOL_CANCELLED',
      message: expect.stringContaining('timed out after 5 ms'),
    });
    const systemError = Object.assign(new Error('ENOENT: no such file'), { code: 'ENOENT' });
    expect(toTraceError(systemError)).toEqual({ name: 'Error', code: 'ENOENT', message: 'ENOENT: no such file' });
  });

  it("uses 'UNKNOWN' when the code is missing or not a string", () => {
    expect(toTraceError(new RangeError('too big'))).toEqual({ name: 'RangeError', code: 'UNKNOWN', message: 'too big' });
    expect(toTraceError(Object.assign(new Error('x'), { code: 42 }))).toMatchObject({ code: 'UNKNOWN' });
  });

  it('accepts error-like objects from other realms', () => {
    expect(toTraceError({ name: 'AbortError', message: 'aborted', code: 'ABORT_ERR' })).toEqual({
      name: 'AbortError',
      code: 'ABORT_ERR',
      message: 'aborted',
    });
  });

  it.each([
    ['a string', 'boom', 'boom'],
    ['a number', 42, '42'],
    ['null', null, 'null'],
    ['a symbol', Symbol('s'), 'Symbol(s)'],
    ['a plain object', { reason: 'nope' }, '{"reason":"nope"}'],
    ['an object without prototype', Object.create(null), '{}'],
  ])('describes %s as a NonError', (_label, value, message) => {
    expect(toTraceError(value)).toEqual({ name: 'NonError', code: 'UNKNOWN', message });
  });

  it('never throws, even for values whose getters or serialisation throw', () => {
    const hostile = new Proxy(
      {},
      {
        get() {
          throw new Error('trap');
        },
        ownKeys() {
          throw new Error('trap');
        },
      },
    );
    const cyclic: Record<string, unknown> = {};
    cyclic['self'] = cyclic;
    expect(toTraceError(hostile)).toEqual({ name: 'NonError', code: 'UNKNOWN', message: 'a thrown object' });
    expect(toTraceError(cyclic)).toEqual({ name: 'NonError', code: 'UNKNOWN', message: '[object Object]' });
  });

  it('redacts secrets from the message', () => {
    const error = Object.assign(new Error('could not reach https://alice:hunter2@api.example.com/v1?api_key=k-123&page=2'), { code: 'E_HTTP' });
    expect(toTraceError(error)).toEqual({ name: 'Error', code: 'E_HTTP', message: 'could not reach https://***@api.example.com/v1?api_key=***&page=2' });
    expect(toTraceError('Authorization: Bearer abc.def.123456')?.message).toBe('Authorization: Bearer ***');
  });

  it('caps a huge message and says how long it was, leaving the error whole', () => {
    const error = new Error('e'.repeat(8 * 1024 * 1024));
    const traced = toTraceError(error)!;
    expect(traced.message).toBe(`${'e'.repeat(4096)}… [truncated, 8388608 characters in all]`);
    expect(error.message).toHaveLength(8 * 1024 * 1024);
    const huge = toTraceError(Object.assign(new Error('x'), { name: 'N'.repeat(10_000), code: 'C'.repeat(10_000) }))!;
    expect(huge.name.length).toBeLessThan(300);
    expect(huge.code.length).toBeLessThan(300);
    expect(toTraceError({ text: 'z'.repeat(100_000) })!.message.length).toBeLessThan(4200);
  });

  it('returns a frozen object', () => {
    expect(Object.isFrozen(toTraceError(new Error('x')))).toBe(true);
  });
});

describe('repairs in a trace', () => {
  const base = {
    executionId: 'exec-1',
    planId: 'p',
    toolName: 't',
    startedAt: '2026-01-01T00:00:00.000Z',
    endedAt: '2026-01-01T00:00:00.001Z',
    durationMs: 1,
    resultSizeBytes: 0,
    success: true,
  };

  it('toTraceRepairs keeps well-formed entries, capped and frozen, and never throws', () => {
    const kept = toTraceRepairs([
      { rule: 'single-to-array', pointer: `/${'a'.repeat(500)}`, from: 'string', to: 'array' },
      { rule: 'made-up', pointer: '/x', from: 'a', to: 'b' },
      'text',
      {
        get rule(): never {
          throw new Error('hostile');
        },
      },
    ]);
    expect(kept).toHaveLength(1);
    expect(kept![0]!.pointer.length).toBeLessThan(300);
    expect(Object.isFrozen(kept)).toBe(true);
    expect(Object.isFrozen(kept![0])).toBe(true);
    expect(toTraceRepairs('nothing')).toBeUndefined();
    expect(toTraceRepairs([])).toBeUndefined();
  });

  it('freezeTrace keeps a frozen trace with repairs from toTraceRepairs as given, and copies others', () => {
    const repairs = toTraceRepairs([{ rule: 'json-string', pointer: '/a', from: 'string', to: 'object' }]);
    const frozen = Object.freeze({ ...base, repairs });
    expect(freezeTrace(frozen, 'p')).toBe(frozen);
    const copied = freezeTrace({ ...base, repairs: [{ rule: 'json-string', pointer: '/a', from: 'string', to: 'object' }] }, 'p');
    expect(copied.repairs).toEqual(repairs);
    expect(Object.isFrozen(copied.repairs)).toBe(true);
  });

  it('freezeTrace refuses malformed repairs with the field named', () => {
    expect(() => freezeTrace({ ...base, repairs: [{ rule: 'guess', pointer: '/a', from: 'x', to: 'y' }] }, 'p')).toThrow(/trace\.repairs/);
    expect(() => freezeTrace({ ...base, repairs: 'none' }, 'p')).toThrow(/trace\.repairs/);
  });
});
