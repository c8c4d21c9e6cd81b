import { ToolRuntime, createConsoleLogger, createRedactingLogger } from '../index';
import { InMemoryToolSource, RecordingLogger, TestTool } from '../testing/index';

describe('createRedactingLogger', () => {
  it('redacts and caps the message, string fields and error fields, and passes the rest on', () => {
    const recording = new RecordingLogger();
    const logger = createRedactingLogger(recording);
    const issues = [{ pointer: '/a' }];
    logger.warn('calling https://u:p4ss@h.example/x?token=t0k', {
      url: 'https://h.example/?client_secret=s3c',
      cause: new Error('Authorization: Bearer abc.def.123456'),
      count: 3,
      issues,
    });
    logger.error('e'.repeat(100_000));
    const [first, second] = recording.entries;
    expect(first).toEqual({
      level: 'warn',
      message: 'calling https://***@h.example/x?token=***',
      fields: { url: 'https://h.example/?client_secret=***', cause: { name: 'Error', message: 'Authorization: Bearer ***' }, count: 3, issues },
    });
    expect(first!.fields!['issues']).toBe(issues);
    expect(second!.message).toBe(`${'e'.repeat(4096)}… [truncated, 100000 characters in all]`);
  });

  it('wraps once, and refuses something that is not a logger', () => {
    const wrapped = createRedactingLogger(new RecordingLogger());
    expect(createRedactingLogger(wrapped)).toBe(wrapped);
    const partial = { debug: () => undefined, info: () => undefined, warn: () => undefined };
    expect(() => createRedactingLogger(partial as never)).toThrow(/error is missing/);
    expect(() => createRedactingLogger(undefined as never)).toThrow(TypeError);
  });
});

describe('the runtime logs redacted messages', () => {
  it('through the injected logger: a deactivation failure whose message carries a password and an api_key', async () => {
    const logger = new RecordingLogger();
    const tool = new TestTool({
      name: 'custom.session',
      deactivate: () => {
        throw new Error('DELETE https://svc:pa55word@sessions.example.com/s/1?api_key=AKxyz123 answered 500');
      },
    });
    const runtime = new ToolRuntime({ sources: [new InMemoryToolSource([tool])], logger });
    const ctx = runtime.createPlan({ planId: 'plan-log' });
    await runtime.execute('custom.session', {}, ctx);
    const report = await runtime.endPlan(ctx);
    expect(report.failures[0]!.message).toContain('pa55word');
    const logged = logger.at('error').map((entry) => entry.message);
    expect(logged).toHaveLength(1);
    expect(logged[0]).toContain('https://***@sessions.example.com/s/1?api_key=*** answered 500');
    expect(logged[0]).not.toMatch(/pa55word|AKxyz123/);
  });

  it('through the console logger, message and fields', () => {
    const lines: string[] = [];
    const original = console.error;
    console.error = (line: string) => void lines.push(line);
    try {
      createConsoleLogger('debug').info('at https://a:b@h/?sig=zz', { header: 'Cookie: sid=1', nested: { password: 'p' } });
    } finally {
      console.error = original;
    }
    expect(lines).toEqual(['[ca] info: at https://***@h/?sig=*** {"header":"Cookie: ***","nested":{"password":"***"}}']);
  });
});
