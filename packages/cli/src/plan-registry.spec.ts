import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { PlanRegistryError, createCancelMessage, type PlanControlMessage, type PlanRegistration } from '@ca/tool-lifecycle';
import { spawn, spawnSync } from 'node:child_process';
import { CliError } from './cli-error';
import { captureIo, removeTemporaryFolders, temporaryFolder } from './cli.test-helper';
import { EXIT_CODES, main } from './index';
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
      expect.objectContaining({
        planId: 'tidy',
        pid: process.pid,
        policy: { readOnly: false, requireCheckpoint: true },
        labels: { file: '/plans/tidy.yaml' },
        stepsDone: 0,
      }),
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
    fs.writeFileSync(
      path.join(plansDir, 'old.json'),
      JSON.stringify({ planId: 'old', pid: process.pid, startedAt, planFile: '/plans/old.yaml', socket: path.join(plansDir, 'old.sock') }),
    );
    fs.writeFileSync(
      path.join(plansDir, 'dead.json'),
      JSON.stringify({ planId: 'dead', pid: 2 ** 22 + 17, startedAt, planFile: '/plans/dead.yaml', socket: path.join(plansDir, 'dead.sock') }),
    );
    fs.writeFileSync(path.join(plansDir, 'junk.json'), '{"planId": 42');
    const plans = await new LocalPlanRegistry(stateDir).list();
    expect(plans).toEqual([
      expect.objectContaining({ planId: 'old', pid: process.pid, labels: { file: '/plans/old.yaml' }, policy: {}, tools: [], stepsDone: 0 }),
    ]);
    expect(fs.existsSync(path.join(plansDir, 'dead.json'))).toBe(false);
  });
});

/** The CliError `fn` throws. */
function unsafe(fn: () => unknown): CliError {
  try {
    fn();
  } catch (error) {
    if (CliError.isInstance(error)) return error;
    throw error;
  }
  throw new Error('expected a CliError');
}

/** A Unix socket server that answers every request as a plan would ('ok'), counting connections: an attacker's. */
async function fakePlanSocket(socket: string): Promise<{ connections: () => number; close: () => Promise<void> }> {
  let connections = 0;
  const server = net.createServer((connection) => {
    connections++;
    connection.end('ok\n');
  });
  await new Promise<void>((resolve) => server.listen(socket, resolve));
  return { connections: () => connections, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

describe("the state folder must be the user's own", () => {
  it('refuses a folder others may write to (mode 0777), saying to chmod 700 it or choose another', async () => {
    const stateDir = temporaryFolder('ca-cli-state-');
    fs.chmodSync(stateDir, 0o777);
    const error = unsafe(() => new LocalPlanRegistry(stateDir));
    expect(error.code).toBe('CLI_STATE_UNSAFE');
    expect(error.message).toBe(
      `The state folder ${stateDir} cannot be used (running plans): others may write to it (mode 777). Others could read or change running plans, their sockets and the approvals kept there. Run chmod 700 ${stateDir}, or choose another folder with --state-dir or AGENTS_STATE_DIR.`,
    );
    // The command refuses it before anything runs, whether it comes from --state-dir or the environment.
    const list = captureIo({ AGENTS_STATE_DIR: stateDir });
    expect(await main(['plan', 'list'], list)).toBe(EXIT_CODES.usage);
    expect(list.err()).toMatch(/^CLI_STATE_UNSAFE: The state folder .* others may write to it \(mode 777\)/);
    const workspace = temporaryFolder();
    const run = captureIo({ TEST_WORKSPACE: workspace });
    expect(await main(['--state-dir', stateDir, 'plan', 'run', 'plan.yaml'], run)).toBe(EXIT_CODES.usage);
    // Nothing ran: the plan's first step would have written here.
    expect(fs.readdirSync(workspace)).toEqual([]);
    expect(run.err()).toMatch(/^CLI_STATE_UNSAFE: /);
    // A plans folder inside that others may write to is refused as well.
    fs.chmodSync(stateDir, 0o700);
    fs.mkdirSync(path.join(stateDir, 'plans'), { mode: 0o700 });
    fs.chmodSync(path.join(stateDir, 'plans'), 0o722);
    expect(unsafe(() => new LocalPlanRegistry(stateDir)).message).toContain(
      `${path.join(stateDir, 'plans')} cannot be used (running plans): others may write to it (mode 722)`,
    );
    fs.chmodSync(path.join(stateDir, 'plans'), 0o700);
    expect(await new LocalPlanRegistry(stateDir).list()).toEqual([]);
  });

  it('refuses a folder that is a symbolic link, even to a folder of the user', async () => {
    const real = temporaryFolder('ca-cli-state-');
    const link = path.join(temporaryFolder('ca-cli-link-'), 'state');
    fs.symlinkSync(real, link);
    const error = unsafe(() => new LocalPlanRegistry(link));
    expect(error.message).toBe(
      `The state folder ${link} cannot be used (running plans): it is a symbolic link. Others could read or change running plans, their sockets and the approvals kept there. Point --state-dir (or AGENTS_STATE_DIR) at a real folder of your own, not at a link.`,
    );
    // A plans folder that is a link is no better.
    fs.symlinkSync(temporaryFolder('ca-cli-elsewhere-'), path.join(real, 'plans'));
    expect(unsafe(() => new LocalPlanRegistry(real)).message).toContain('(running plans): it is a symbolic link');
  });

  it('refuses a folder in a parent others may write to without the sticky bit, and one of another user', () => {
    const parent = temporaryFolder('ca-cli-shared-');
    fs.chmodSync(parent, 0o777);
    const stateDir = path.join(parent, 'state');
    fs.mkdirSync(stateDir, { mode: 0o700 });
    expect(unsafe(() => new LocalPlanRegistry(stateDir)).message).toContain(
      `others may replace it: its parent ${parent} is writable by others (mode 777) without the sticky bit`,
    );
    // With the sticky bit (as /tmp has), others cannot rename it away.
    fs.chmodSync(parent, 0o1777);
    expect(() => new LocalPlanRegistry(stateDir)).not.toThrow();
    // A folder of another user: one of root's when the tests do not run as root, one given away when they do.
    let foreign = '/usr';
    if (process.getuid?.() === 0) {
      foreign = temporaryFolder('ca-cli-foreign-');
      fs.chownSync(foreign, 4242, 4242);
    }
    expect(unsafe(() => new LocalPlanRegistry(foreign)).message).toMatch(
      /cannot be used \(running plans\): it belongs to another user \(uid \d+, you are \d+\)\..* Choose a folder of your own with --state-dir or AGENTS_STATE_DIR\./,
    );
  });

  it('plan list never deletes a file a stale entry names; only the entry and the socket its plan id names', async () => {
    const stateDir = temporaryFolder('ca-cli-state-');
    const plansDir = path.join(stateDir, 'plans');
    fs.mkdirSync(plansDir, { mode: 0o700 });
    const victim = path.join(temporaryFolder('ca-cli-victim-'), 'precious.txt');
    fs.writeFileSync(victim, 'keep me');
    const startedAt = new Date().toISOString();
    const deadPid = 2 ** 22 + 17;
    const stale = (planId: string) => ({
      planId,
      pid: deadPid,
      host: 'h',
      startedAt,
      heartbeatAt: startedAt,
      policy: {},
      tools: [],
      stepsDone: 0,
      labels: {},
      socket: victim,
    });
    fs.writeFileSync(path.join(plansDir, 'stale.json'), JSON.stringify(stale('stale')));
    fs.writeFileSync(path.join(plansDir, 'stale.sock'), '');
    // An entry written under another plan's name, and an entry that is a FIFO: neither is read as a plan, nor blocks.
    fs.writeFileSync(path.join(plansDir, 'impostor.json'), JSON.stringify({ ...stale('someone-else'), pid: process.pid }));
    expect(spawnSync('mkfifo', [path.join(plansDir, 'fifo.json')]).status).toBe(0);
    expect(await new LocalPlanRegistry(stateDir).list()).toEqual([]);
    expect(fs.readFileSync(victim, 'utf8')).toBe('keep me');
    expect(fs.readdirSync(plansDir).sort()).toEqual(['fifo.json', 'impostor.json']);
  });

  it('plan cancel connects to the socket its plan id names, never to one an entry names: a fake socket gets nothing and no success is printed', async () => {
    const stateDir = temporaryFolder('ca-cli-state-');
    const plansDir = path.join(stateDir, 'plans');
    fs.mkdirSync(plansDir, { mode: 0o700 });
    const evilSocket = path.join(temporaryFolder('ca-cli-evil-'), 'evil.sock');
    const evil = await fakePlanSocket(evilSocket);
    // A live process, as a plan's would be.
    const sleeper = spawn('sleep', ['30'], { stdio: 'ignore' });
    try {
      const startedAt = new Date().toISOString();
      const fake = { planId: 'victim', pid: sleeper.pid, host: 'h', startedAt, heartbeatAt: startedAt, policy: {}, tools: [], stepsDone: 0, labels: {} };
      fs.writeFileSync(path.join(plansDir, 'victim.json'), JSON.stringify({ ...fake, socket: evilSocket }));
      const registry = new LocalPlanRegistry(stateDir);
      const missing = await failure(registry.send(createCancelMessage('victim', 'stop')));
      expect(missing.code).toBe('PLAN_REGISTRY_PLAN_NOT_FOUND');
      expect(missing.message).toContain(`could not reach it (pid ${sleeper.pid}): it has no socket at ${path.join(plansDir, 'victim.sock')}`);
      // Something at the plan's own socket path that is not a socket is not connected to either.
      fs.writeFileSync(path.join(plansDir, 'victim.sock'), '');
      expect((await failure(registry.send(createCancelMessage('victim', 'stop')))).message).toContain(`${path.join(plansDir, 'victim.sock')} is not a socket`);
      expect(evil.connections()).toBe(0);
      const cancel = captureIo();
      expect(await main(['--state-dir', stateDir, 'plan', 'cancel', 'victim'], cancel)).toBe(EXIT_CODES.notFound);
      expect(cancel.out()).toBe('');
      expect(cancel.err()).toMatch(/^CLI_PLAN_NOT_FOUND: No running plan has id 'victim' \(could not reach it/);
      expect(evil.connections()).toBe(0);
    } finally {
      sleeper.kill('SIGKILL');
      await evil.close();
    }
  });
});
