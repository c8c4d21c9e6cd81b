import { SandboxPool } from './sandbox-pool';

const limits = { memoryBytes: 32 * 1024 * 1024, stackBytes: 256 * 1024, timeMs: 1000, outputChars: 100_000 };

/** The worker of the pool's one slot (to see that it was replaced). */
function workerOf(pool: SandboxPool): unknown {
  return (pool as unknown as { slots: { worker: unknown }[] }).slots[0]?.worker;
}

describe('SandboxPool', () => {
  const pool = new SandboxPool({ size: 1, graceMs: 1 });
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

  it('terminates and replaces a worker whose program does not stop (no interrupt poll inside large copies)', async () => {
    await pool.warm();
    const before = workerOf(pool);
    let ticks = 0;
    const timer = setInterval(() => ticks++, 1);
    const result = await pool.run(
      {
        code: 'let s = ""; for (let i = 0; i < 40; i++) s = "ab".repeat(2 ** 24 + i); return s.length;',
        idents: [],
        names: [],
        seed: 1,
        now: 0,
        limits: { ...limits, memoryBytes: 160 * 1024 * 1024, timeMs: 1 },
      },
      { onCall: () => ({ ok: true, json: undefined }) },
    );
    clearInterval(timer);
    expect(result.outcome).toMatchObject({ kind: 'failed', code: 'CODE_TIME_LIMIT' });
    expect(ticks).toBeGreaterThan(0);
    expect(workerOf(pool)).not.toBe(before);
    const after = await pool.run({ code: 'return 7;', idents: [], names: [], seed: 1, now: 0, limits }, { onCall: () => ({ ok: true, json: undefined }) });
    expect(after.outcome).toEqual({ kind: 'returned', json: '7' });
  });

  it('replaces a worker that dies during a run, and ends the run with CODE_SANDBOX_FAILED', async () => {
    await pool.warm();
    const before = workerOf(pool) as { terminate(): Promise<number> };
    const running = pool.run(
      { code: 'await tools.wait({}); return 1;', idents: ['wait'], names: ['wait'], seed: 1, now: 0, limits },
      {
        onCall: () => {
          void before.terminate();
          return new Promise(() => undefined);
        },
      },
    );
    expect((await running).outcome).toMatchObject({ kind: 'failed', code: 'CODE_SANDBOX_FAILED' });
    expect(workerOf(pool)).not.toBe(before);
    const after = await pool.run({ code: 'return 8;', idents: [], names: [], seed: 1, now: 0, limits }, { onCall: () => ({ ok: true, json: undefined }) });
    expect(after.outcome).toEqual({ kind: 'returned', json: '8' });
  });
});
