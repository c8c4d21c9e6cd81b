import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { PlanRegistryError, createCancelMessage, type PlanControlMessage, type PlanRegistration } from '@ca/tool-lifecycle';
import { removeTemporaryFolders, temporaryFolder } from './cli.test-helper';
import { LocalPlanRegistry } from './plan-registry';

afterEach(() => removeTemporaryFolders());

const registration = (planId: string): PlanRegistration => ({
  planId,
  policy: { readOnly: false, requireCheckpoint: true },
  startedAt: new Date().toISOString(),
  tools: [],
  stepsDone: 0,
  labels: { file: '/plans/tidy.yaml' },
});

/** Writes one line to a plan's socket and returns what it answers. */
function request(socket: string, line: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const connection = net.connect(socket);
    let answer = '';
    connection.on('connect', () => connection.write(line));
    connection.on('data', (chunk: Buffer) => (answer += chunk.toString()));
    connection.on('close', () => resolve(answer));
    connection.on('error', reject);
  });
}

async function failure(promise: Promise<unknown>): Promise<PlanRegistryError> {
  try {
    await promise;
  } catch (error) {
    if (PlanRegistryError.isInstance(error)) return error;
    throw error;
  }
  throw new Error('expected a PlanRegistryError');
}

describe('the local plan registry (state folder)', () => {
  it('announces a plan with its record, refreshes it, hands it control messages, and withdraws it', async () => {
    const stateDir = temporaryFolder('ca-cli-state-');
    const registry = new LocalPlanRegistry(stateDir);
    const received: PlanControlMessage[] = [];
    const entry = await registry.register(registration('tidy'), (message) => received.push(message));
    expect(await registry.list()).toEqual([
      expect.objectContaining({ planId: 'tidy', pid: process.pid, policy: { readOnly: false, requireCheckpoint: true }, labels: { file: '/plans/tidy.yaml' }, stepsDone: 0 }),
    ]);
    await entry.heartbeat({ tools: ['builtin.fs.write'], stepsDone: 2 });
    expect((await registry.list())[0]).toEqual(expect.objectContaining({ tools: ['builtin.fs.write'], stepsDone: 2 }));
    // The record is written whole (renamed into place) and readable by its owner only.
    expect(fs.statSync(path.join(stateDir, 'plans', 'tidy.json')).mode & 0o777).toBe(0o600);

    const message = createCancelMessage('tidy', 'enough', 'ops');
    await expect(registry.send(message)).resolves.toEqual({ planId: 'tidy', delivery: 'delivered' });
    expect(received).toEqual([message]);

    await entry.end();
    expect(await registry.list()).toEqual([]);
    expect(fs.readdirSync(path.join(stateDir, 'plans'))).toEqual([]);
    expect((await failure(registry.send(message))).code).toBe('PLAN_REGISTRY_PLAN_NOT_FOUND');
  });

  it('refuses a second live plan with the same id, and an id that cannot be a file name', async () => {
    const stateDir = temporaryFolder('ca-cli-state-');
    const registry = new LocalPlanRegistry(stateDir);
    const entry = await registry.register(registration('once'), () => undefined);
    const duplicate = await failure(new LocalPlanRegistry(stateDir).register(registration('once'), () => undefined));
    expect(duplicate.code).toBe('PLAN_REGISTRY_DUPLICATE_PLAN');
    expect(duplicate.message).toContain(`it runs as pid ${process.pid}. Choose another --plan-id, or cancel it with 'agents plan cancel once'.`);
    expect((await failure(registry.register(registration('../escape'), () => undefined))).code).toBe('PLAN_REGISTRY_INVALID_ARGUMENT');
    await registry.close();
    expect(await registry.list()).toEqual([]);
    await entry.end(); // already withdrawn by close: nothing happens
  });

  it('answers only well-formed requests for its own plan; the bare `cancel` of earlier versions still works', async () => {
    const stateDir = temporaryFolder('ca-cli-state-');
    const registry = new LocalPlanRegistry(stateDir);
    const received: PlanControlMessage[] = [];
    const entry = await registry.register(registration('guarded'), (message) => received.push(message));
    const socket = path.join(stateDir, 'plans', 'guarded.sock');
    expect(await request(socket, 'shutdown\n')).toBe('unknown command\n');
    expect(await request(socket, `${JSON.stringify(createCancelMessage('another-plan', 'wrong target'))}\n`)).toBe('unknown command\n');
    expect(await request(socket, `${JSON.stringify({ kind: 'cancel', planId: 'guarded', reason: '\u001b[2J', sentAt: 'now' })}\n`)).toBe('unknown command\n');
    expect(await request(socket, 'x'.repeat(70_000))).toBe('');
    expect(received).toEqual([]);
    expect(await request(socket, 'cancel\n')).toBe('ok\n');
    expect(received.map((message) => message.reason)).toEqual(["cancelled by 'agents plan cancel guarded'"]);
    await entry.end();
  });

  it('lists entries written by earlier versions, and removes entries of processes that died', async () => {
    const stateDir = temporaryFolder('ca-cli-state-');
    const plansDir = path.join(stateDir, 'plans');
    fs.mkdirSync(plansDir, { recursive: true });
    const startedAt = new Date().toISOString();
    fs.writeFileSync(path.join(plansDir, 'old.json'), JSON.stringify({ planId: 'old', pid: process.pid, startedAt, planFile: '/plans/old.yaml', socket: path.join(plansDir, 'old.sock') }));
    fs.writeFileSync(path.join(plansDir, 'dead.json'), JSON.stringify({ planId: 'dead', pid: 2 ** 22 + 17, startedAt, planFile: '/plans/dead.yaml', socket: path.join(plansDir, 'dead.sock') }));
    fs.writeFileSync(path.join(plansDir, 'junk.json'), '{"planId": 42');
    const plans = await new LocalPlanRegistry(stateDir).list();
    expect(plans).toEqual([expect.objectContaining({ planId: 'old', pid: process.pid, labels: { file: '/plans/old.yaml' }, policy: {}, tools: [], stepsDone: 0 })]);
    expect(fs.existsSync(path.join(plansDir, 'dead.json'))).toBe(false);
  });
});
