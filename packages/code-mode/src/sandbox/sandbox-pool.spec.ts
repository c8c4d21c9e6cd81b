import { SandboxPool } from './sandbox-pool';

const limits = { memoryBytes: 32 * 1024 * 1024, stackBytes: 256 * 1024, timeMs: 1000, outputChars: 100_000 };

describe('SandboxPool', () => {
  const pool = new SandboxPool({ size: 1 });
  afterAll(() => pool.close());

  it('runs a program that calls the host', async () => {
    const result = await pool.run(
      {
        code: 'const a = await tools.add({ x: 2 }); console.log("got", a); return { a, r: Math.random(), t: Date.now() };',
        idents: ['add'],
        names: ['math.add'],
        seed: 1,
        now: 1000,
        limits,
      },
      { onCall: (call) => ({ ok: true, json: JSON.stringify({ name: call.name, input: JSON.parse(call.input) }) }) },
    );
    expect(result.outcome).toMatchObject({ kind: 'returned' });
    expect(JSON.parse((result.outcome as { json: string }).json)).toMatchObject({ a: { name: 'math.add', input: { x: 2 } }, t: 1000 });
    expect(result.logs).toEqual([{ level: 'log', text: 'got {"name":"math.add","input":{"x":2}}' }]);
  });
});
