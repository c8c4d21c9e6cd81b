'use strict';
// The Redis plan registry with 10,000 registered plans on one local
// redis-server: operations per second (register, heartbeat, list, send,
// end), the latency of a cancel from one registry instance to the plan's
// handler in another (median and p99), and — in the same run — what the
// registry adds to runtime.execute (a runtime with the registry against one
// without, interleaved rounds; the aim is nothing: heartbeats are per plan).
const { spawn } = require('node:child_process');
const net = require('node:net');
const { performance } = require('node:perf_hooks');
const { ToolRuntime, createCancelMessage, silentLogger } = require('../../packages/tool-lifecycle/dist/index.js');
const { InMemoryToolSource } = require('../../packages/tool-lifecycle/dist/testing/index.js');
const { connectRedisPlanRegistry } = require('../../packages/plan-registry-redis/dist/index.js');
const { createClient } = require('@redis/client');
const { compare, comparePaired, median, runWhenMain } = require('./harness');

const PLANS = 10_000;
const IN_FLIGHT = 100;
const CANCELS = 1_000;

function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** A redis-server of the benchmark's own, with nothing on disk. */
async function startRedis() {
  const port = await freePort();
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  await new Promise((resolve, reject) => {
    let output = '';
    child.stdout.on('data', (chunk) => {
      output += chunk;
      if (output.includes('Ready to accept connections')) resolve();
    });
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`redis-server exited with ${code}: ${output}`)));
  });
  child.stdout.resume();
  return {
    url: `redis://127.0.0.1:${port}`,
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', resolve);
        child.kill('SIGTERM');
      }),
  };
}

/** The server's `used_memory`, in bytes. */
async function usedMemory(url) {
  const client = createClient({ url });
  await client.connect();
  try {
    const info = await client.sendCommand(['INFO', 'memory']);
    return Number(/used_memory:(\d+)/.exec(info)[1]);
  } finally {
    client.destroy();
  }
}

/** Runs `count` async operations with at most `limit` in flight; returns operations per second. */
async function throughput(count, limit, operation) {
  let next = 0;
  const started = performance.now();
  const worker = async () => {
    while (next < count) await operation(next++);
  };
  await Promise.all(Array.from({ length: Math.min(limit, count) }, worker));
  return count / ((performance.now() - started) / 1_000);
}

function percentile(values, fraction) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(fraction * sorted.length) - 1)];
}

const registration = (planId) => ({
  planId,
  policy: { readOnly: true, requireCheckpoint: false },
  startedAt: new Date().toISOString(),
  tools: [],
  stepsDone: 0,
  labels: { job: planId },
});

async function run() {
  const redis = await startRedis();
  const hostA = await connectRedisPlanRegistry({ url: redis.url, host: 'bench-a', logger: silentLogger });
  const hostB = await connectRedisPlanRegistry({ url: redis.url, host: 'bench-b', logger: silentLogger });
  const bare = createClient({ url: redis.url });
  await bare.connect();
  try {
    // The baseline of every throughput row: the same server answering bare
    // commands with the same number in flight — a PING (one round trip) and a
    // SET of a record as big as a plan's.
    const pingPerSecond = await throughput(PLANS, IN_FLIGHT, () => bare.sendCommand(['PING']));
    const record = JSON.stringify(registration('plan-baseline'));
    const setPerSecond = await throughput(PLANS, IN_FLIGHT, (index) => bare.sendCommand(['SET', `bench:bare:${index}`, record]));
    await bare.sendCommand(['FLUSHALL']);

    // 10,000 plans on host A, each with a handler that notes when a message arrived.
    const arrived = new Map();
    const entries = new Array(PLANS);
    const memoryBefore = await usedMemory(redis.url);
    const registerPerSecond = await throughput(PLANS, IN_FLIGHT, async (index) => {
      entries[index] = await hostA.register(registration(`plan-${index}`), () => arrived.set(`plan-${index}`, performance.now()));
    });

    const bytesPerPlan = ((await usedMemory(redis.url)) - memoryBefore) / PLANS;
    const heartbeatTicks = [];
    for (let tick = 0; tick < 3; tick++) {
      const started = performance.now();
      await Promise.all(entries.map((entry, index) => entry.heartbeat({ tools: ['builtin.fs.read'], stepsDone: tick + index })));
      heartbeatTicks.push(performance.now() - started);
    }
    const heartbeatMs = median(heartbeatTicks);

    const listTimes = [];
    for (let round = 0; round < 5; round++) {
      const started = performance.now();
      const plans = await hostB.list();
      listTimes.push(performance.now() - started);
      if (plans.length !== PLANS) throw new Error(`list returned ${plans.length} plans, expected ${PLANS}`);
    }
    const listMs = median(listTimes);

    // Cancel latency: from the call on host B to the handler of the plan on host A.
    const latencies = [];
    for (let index = 0; index < CANCELS; index++) {
      const planId = `plan-${index}`;
      const sent = performance.now();
      const result = await hostB.send(createCancelMessage(planId, 'bench'));
      if (result.delivery !== 'delivered') throw new Error(`cancel of ${planId} was ${result.delivery}`);
      while (!arrived.has(planId)) await new Promise((resolve) => setImmediate(resolve));
      latencies.push(arrived.get(planId) - sent);
    }
    const sendPerSecond = await throughput(2_000, IN_FLIGHT, (index) => hostB.send(createCancelMessage(`plan-${CANCELS + index}`, 'bench')));

    // What the registry adds to an execution: a runtime with the registry (its
    // plans registered, its heartbeat timer running, 10,000 other plans in
    // Redis) against one without, each in a plan that lives for the round.
    const inputSchema = { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] };
    const outputSchema = { type: 'object', properties: { greeting: { type: 'string' } }, required: ['greeting'] };
    const tool = {
      descriptor: { name: 'bench.greet', description: 'Greets.', source: 'custom', capability: { writes: false }, inputSchema, outputSchema },
      execute: async (input) => ({ ok: true, output: { greeting: `hi ${input.name}` } }),
    };
    const plain = new ToolRuntime({ sources: [new InMemoryToolSource([tool])], logger: silentLogger });
    const registered = new ToolRuntime({ sources: [new InMemoryToolSource([tool])], logger: silentLogger, planRegistry: hostA });
    await plain.listTools();
    await registered.listTools();
    const input = { name: 'Ada' };
    let plainPlan;
    let registeredPlan;
    // Paired rounds (the median of each round's ratio to its neighbour) cancel
    // the drift of a shared machine that dwarfs a few percent.
    const paired = await comparePaired(
      {
        'without a registry': {
          async: true,
          fn: () => plain.execute('bench.greet', input, plainPlan),
          setup: async () => (plainPlan = plain.createPlan()),
          teardown: () => plain.endPlan(plainPlan),
        },
        'with the Redis registry': {
          async: true,
          fn: () => registered.execute('bench.greet', input, registeredPlan),
          setup: async () => {
            registeredPlan = registered.createPlan();
            await registered.whenRegistered(registeredPlan);
          },
          teardown: () => registered.endPlan(registeredPlan),
        },
      },
      { baseline: 'without a registry', rounds: 41, iterations: 5_000, warmup: 20_000 },
    );

    // What it adds to a plan: registering and withdrawing it (one round trip each).
    const planCost = await compare(
      {
        'runPlan, no registry': { async: true, fn: () => plain.runPlan({}, (ctx) => plain.execute('bench.greet', input, ctx)) },
        'runPlan, Redis registry': { async: true, fn: () => registered.runPlan({}, (ctx) => registered.execute('bench.greet', input, ctx)) },
      },
      { rounds: 7, iterations: 300, warmup: 300 },
    );

    const endPerSecond = await throughput(PLANS, IN_FLIGHT, (index) => entries[index].end());
    const left = await hostB.list();
    if (left.length !== 0) throw new Error(`${left.length} plans left after every plan ended`);

    const ops = (value) => `${Math.round(value).toLocaleString('en-US')} ops/s`;
    return [
      {
        name: 'registry: register (10,000 plans, 100 in flight)',
        baseline: 'bare SET of the record',
        baselineValue: ops(setPerSecond),
        subjectValue: ops(registerPerSecond),
        target: 'report',
        pass: true,
      },
      {
        name: 'registry: heartbeat of 10,000 plans (one tick)',
        baseline: 'bare SET of the record',
        baselineValue: `${((PLANS / setPerSecond) * 1_000).toFixed(0)} ms`,
        subjectValue: `${heartbeatMs.toFixed(0)} ms (${ops((PLANS / heartbeatMs) * 1_000)})`,
        target: 'report',
        pass: true,
      },
      {
        name: 'registry: Redis memory per registered plan',
        baseline: 'the record as JSON',
        baselineValue: `${Buffer.byteLength(record)} bytes`,
        subjectValue: `${Math.round(bytesPerPlan)} bytes`,
        target: 'report',
        pass: true,
        note: 'record, index entry; labels { job }',
      },
      {
        name: 'registry: list of 10,000 plans, from another host',
        baseline: '10,000 bare PINGs, 100 in flight',
        baselineValue: `${((PLANS / pingPerSecond) * 1_000).toFixed(0)} ms`,
        subjectValue: `${listMs.toFixed(0)} ms per list`,
        target: 'report',
        pass: true,
      },
      {
        name: 'registry: send (100 in flight, 10,000 plans registered)',
        baseline: 'bare PING',
        baselineValue: ops(pingPerSecond),
        subjectValue: ops(sendPerSecond),
        target: 'report',
        pass: true,
      },
      {
        name: 'registry: end (100 in flight)',
        baseline: 'bare PING',
        baselineValue: ops(pingPerSecond),
        subjectValue: ops(endPerSecond),
        target: 'report',
        pass: true,
      },
      {
        name: 'registry: cancel latency, host B → plan handler on host A (1,000 cancels, 10,000 plans)',
        baseline: 'median',
        baselineValue: `${median(latencies).toFixed(2)} ms`,
        subjectValue: `p99 ${percentile(latencies, 0.99).toFixed(2)} ms`,
        target: 'p99 < 500 ms',
        pass: percentile(latencies, 0.99) < 500,
        note: `max ${Math.max(...latencies).toFixed(2)} ms`,
      },
      {
        name: 'runtime.execute with a Redis plan registry',
        baseline: 'the same runtime without a registry',
        baselineNs: paired.medians['without a registry'],
        subjectNs: paired.medians['with the Redis registry'],
        ratio: paired.ratios['with the Redis registry'],
        maxRatio: 1.1,
        target: 1.1,
        note: 'aim: no cost per execution',
      },
      {
        name: 'runPlan of one execution with a Redis plan registry',
        baseline: 'runPlan without a registry',
        baselineNs: planCost['runPlan, no registry'],
        subjectNs: planCost['runPlan, Redis registry'],
        target: 'report',
        pass: true,
        note: `+${((planCost['runPlan, Redis registry'] - planCost['runPlan, no registry']) / 1_000).toFixed(0)} µs per plan: register and withdraw, a round trip each`,
      },
    ];
  } finally {
    bare.destroy();
    await hostA.close();
    await hostB.close();
    await redis.stop();
  }
}

module.exports = { run };
runWhenMain(module, run);
