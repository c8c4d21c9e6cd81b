'use strict';
// One host of the tests: a process with its own ToolRuntime and a Redis plan
// registry, running one plan whose tool waits for the plan's cancellation.
// It reports events on stdout as JSON lines and takes commands on stdin:
//   {"command":"list"}                  -> {"event":"list","plans":[…]}
//   {"command":"cancel","planId":"x"}   -> {"event":"sent","at":…,"result":{…}} or {"event":"send-failed",…}
//   {"command":"finish"}                -> cancels its own plan, closes the registry, exits 0
// Settings come from the environment: REDIS_URL, HOST_NAME, PLAN_ID, TTL_MS, HEARTBEAT_MS.
const readline = require('node:readline');
const { ToolRuntime, createCancelMessage, silentLogger } = require('@ca/tool-lifecycle');
const { connectRedisPlanRegistry } = require('../../dist/index.js');

const emit = (event) => process.stdout.write(`${JSON.stringify(event)}\n`);

const waitForCancel = {
  descriptor: { name: 'test.wait-for-cancel', description: 'Waits until its plan is cancelled.', source: 'custom', capability: { writes: false } },
  execute: (_input, ctx) =>
    new Promise((resolve) => {
      const seen = () => {
        emit({ event: 'cancel-seen', at: Date.now(), reason: ctx.cancellationToken.reason });
        resolve({ ok: true, output: 'cancelled' });
      };
      if (ctx.signal.aborted) seen();
      else ctx.signal.addEventListener('abort', seen, { once: true });
    }),
};

async function main() {
  const env = process.env;
  const registry = await connectRedisPlanRegistry({
    url: env.REDIS_URL,
    host: env.HOST_NAME,
    ttlMs: Number(env.TTL_MS ?? 30_000),
    heartbeatIntervalMs: Number(env.HEARTBEAT_MS ?? 10_000),
    reconnectMaxDelayMs: 100,
    logger: silentLogger,
  });
  const runtime = new ToolRuntime({ sources: [{ kind: 'custom', id: 'test', discover: async () => [waitForCancel.descriptor], get: async () => waitForCancel }], planRegistry: registry, logger: silentLogger });
  const ctx = runtime.createPlan({ planId: env.PLAN_ID, registry: { labels: { role: env.HOST_NAME } } });
  await runtime.whenRegistered(ctx);
  emit({ event: 'registered', planId: ctx.planId, instance: registry.instance, pid: process.pid });

  const finished = (async () => {
    // The runtime answers a cancelled plan's call with ToolCancelledError.
    const outcome = await runtime.execute('test.wait-for-cancel', {}, ctx).then(
      (result) => (result.ok ? 'ok' : result.error.code),
      (error) => error.code,
    );
    await runtime.endPlan(ctx);
    emit({ event: 'plan-ended', planId: ctx.planId, outcome });
  })();

  const lines = readline.createInterface({ input: process.stdin });
  lines.on('line', async (line) => {
    const request = JSON.parse(line);
    if (request.command === 'list') {
      emit({ event: 'list', plans: await registry.list() });
    } else if (request.command === 'cancel') {
      const at = Date.now();
      try {
        const result = await registry.send(createCancelMessage(request.planId, `cancelled from ${env.HOST_NAME}`, `${env.HOST_NAME} pid ${process.pid}`));
        emit({ event: 'sent', at, result });
      } catch (error) {
        emit({ event: 'send-failed', code: error.code, message: error.message });
      }
    } else if (request.command === 'finish') {
      ctx.cancellationToken.cancel('finished');
      await finished;
      lines.close();
      await registry.close();
      emit({ event: 'closed' });
    }
  });
  // Ends the process on its own once its plan was cancelled from elsewhere and ended.
  await finished;
  if (env.EXIT_WHEN_ENDED === '1') {
    lines.close();
    await registry.close();
    emit({ event: 'closed' });
  }
}

main().catch((error) => {
  emit({ event: 'failed', code: error.code, message: error.message });
  process.exitCode = 1;
});
