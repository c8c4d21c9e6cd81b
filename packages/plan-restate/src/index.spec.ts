import * as publicApi from './index';
import * as testing from './testing/index';
import { DurablePlanClient, DurablePlanError, createJournalCodec } from './index';

describe('@ca/plan-restate public API', () => {
  it('exports exactly the documented names', () => {
    expect(Object.keys(publicApi).sort()).toEqual([
      'DurableApprovalRouter',
      'DurableApprovals',
      'DurablePlanClient',
      'DurablePlanError',
      'RestateCallJournal',
      'createJournalCodec',
      'createPlanWorkflow',
      'serveDurablePlans',
      'statusObjectName',
    ]);
    expect(Object.keys(testing).sort()).toEqual(['loopbackCommand', 'restateServerBinary', 'startForwarder', 'startRestateServer']);
  });

  it('the journal codec encrypts with AES-256-GCM: no plaintext in what Restate stores, the same value back, tampering refused', async () => {
    const codec = createJournalCodec('k'.repeat(32));
    const value = Buffer.from(JSON.stringify({ output: 'secret token ghp_abc' }));
    const stored = Buffer.from(codec.encode(value));
    expect(stored.toString('latin1')).not.toContain('secret');
    expect(Buffer.from(await codec.decode(stored)).equals(value)).toBe(true);
    stored[stored.length - 1] = (stored[stored.length - 1] as number) ^ 1;
    await expect(async () => codec.decode(stored)).rejects.toThrow();
    expect(() => createJournalCodec('short')).toThrow(DurablePlanError);
  });

  it('a client refuses URLs and plan ids of the wrong shape with coded errors', async () => {
    expect(() => new DurablePlanClient({ ingressUrl: 'localhost:8080', adminUrl: 'http://127.0.0.1:9070' })).toThrow(/ingressUrl must be an http\(s\) URL/);
    const client = new DurablePlanClient({ ingressUrl: 'http://127.0.0.1:1', adminUrl: 'http://127.0.0.1:1', timeoutMs: 2_000 });
    await expect(client.start('../etc', { plan: 'x' })).rejects.toMatchObject({ code: 'DURABLE_PLAN_INVALID_ARGUMENT' });
    await expect(client.start('p', { plan: 'x' })).rejects.toMatchObject({ code: 'DURABLE_PLAN_UNAVAILABLE' });
  });
});
