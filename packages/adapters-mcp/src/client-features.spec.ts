import { join } from 'node:path';
import {
  INTERACTION_HANDLER,
  registerToolRuntime,
  SAMPLING_HANDLER,
  TOOL_RUNTIME,
  ToolAccessDeniedError,
  ToolRuntime,
  type InteractionContext,
  type InteractionHandler,
  type InteractionRequest,
  type InteractionResponse,
  type SamplingContext,
  type SamplingHandler,
  type SamplingRequest,
  type SamplingResult,
  type ToolProgress,
} from '@ca/tool-lifecycle';
import { RecordingLogger } from '@ca/tool-lifecycle/testing';
import { isProcessAlive } from '@ca/sandbox/testing';
import { container } from 'tsyringe';
import { createMcpAdapter, registerMcpAdapter } from './mcp-adapter';
import type { McpAdapterSettings } from './mcp-adapter-settings';
import type { McpResourceUpdate } from './mcp-tool-source';
import { countingSpawn, EVERYTHING_SERVER, rejectionOf, waitFor } from './mcp-fixtures.test-helper';

jest.setTimeout(90_000);

/** The service's side of the seam: answers as told, and remembers what it was asked. */
class ScriptedPerson implements InteractionHandler {
  readonly asked: { request: InteractionRequest; context: InteractionContext }[] = [];
  constructor(private readonly answer: (request: InteractionRequest) => InteractionResponse) {}
  async interact(request: InteractionRequest, context: InteractionContext): Promise<InteractionResponse> {
    this.asked.push({ request, context });
    return this.answer(request);
  }
}

/** A model stand-in: the runtime has none; the service brings its own through this seam. */
class EchoModel implements SamplingHandler {
  readonly requests: { request: SamplingRequest; context: SamplingContext }[] = [];
  async createMessage(request: SamplingRequest, context: SamplingContext): Promise<SamplingResult> {
    this.requests.push({ request, context });
    const first = request.messages[0]?.content as { text?: string };
    return { role: 'assistant', content: { type: 'text', text: `model says: ${first.text ?? ''}` }, model: 'echo-model', stopReason: 'endTurn' };
  }
}

function everything(settings: Partial<McpAdapterSettings> = {}, extensions: Record<string, unknown> = {}) {
  const spawns = countingSpawn();
  const logger = new RecordingLogger();
  const source = createMcpAdapter({
    servers: { mcpServers: { everything: { command: process.execPath, args: [EVERYTHING_SERVER, 'stdio'], ...extensions } } },
    spawn: spawns.spawn,
    logger,
    ...settings,
  });
  const runtime = new ToolRuntime({ sources: [source], logger });
  return {
    source,
    runtime,
    logger,
    spawns,
    close: async () => {
      await runtime.dispose();
      for (const pid of spawns.pids) expect(isProcessAlive(pid)).toBe(false);
    },
  };
}

describe('capabilities follow the handlers the service injects', () => {
  it('without handlers the client declares no elicitation or sampling, so the server lists no tool that needs them', async () => {
    const setup = everything();
    try {
      const names = (await setup.runtime.listTools()).map((tool) => tool.name);
      expect(names).toContain('mcp.everything.echo');
      expect(names).not.toContain('mcp.everything.trigger-elicitation-request');
      expect(names).not.toContain('mcp.everything.trigger-url-elicitation');
      expect(names).not.toContain('mcp.everything.trigger-sampling-request');
      // Roots are declared for plan and discovery sessions: the server offers its roots tool.
      expect(names).toContain('mcp.everything.get-roots-list');
    } finally {
      await setup.close();
    }
  });

  it('with both handlers the server lists its elicitation and sampling tools', async () => {
    const setup = everything({ interactionHandler: new ScriptedPerson(() => ({ action: 'decline' })), samplingHandler: new EchoModel() });
    try {
      const names = (await setup.runtime.listTools()).map((tool) => tool.name);
      expect(names).toEqual(
        expect.arrayContaining([
          'mcp.everything.trigger-elicitation-request',
          'mcp.everything.trigger-url-elicitation',
          'mcp.everything.trigger-sampling-request',
        ]),
      );
    } finally {
      await setup.close();
    }
  });
});

describe('handlers registered in the container', () => {
  it('are taken by registerMcpAdapter when the settings give none', async () => {
    const services = container.createChildContainer();
    const person = new ScriptedPerson(() => ({ action: 'decline' }));
    services.register(INTERACTION_HANDLER, { useValue: person });
    services.register(SAMPLING_HANDLER, { useValue: new EchoModel() });
    const spawns = countingSpawn();
    registerMcpAdapter(services, {
      servers: { mcpServers: { everything: { command: process.execPath, args: [EVERYTHING_SERVER, 'stdio'] } } },
      spawn: spawns.spawn,
      logger: new RecordingLogger(),
    });
    registerToolRuntime(services, {});
    const runtime = services.resolve(TOOL_RUNTIME);
    try {
      const names = (await runtime.listTools()).map((tool) => tool.name);
      expect(names).toEqual(expect.arrayContaining(['mcp.everything.trigger-elicitation-request', 'mcp.everything.trigger-sampling-request']));
    } finally {
      await runtime.dispose();
      for (const pid of spawns.pids) expect(isProcessAlive(pid)).toBe(false);
    }
  });
});

describe('elicitation through the interaction handler', () => {
  it('a form: the person fills it in, the server gets the values; the request names the plan and the tool', async () => {
    const person = new ScriptedPerson((request) =>
      request.kind === 'form' ? { action: 'accept', content: { name: 'Ada Lovelace', check: true, integer: 7 } } : { action: 'decline' },
    );
    const setup = everything({ interactionHandler: person });
    try {
      const result = await setup.runtime.runPlan({ planId: 'form-plan' }, (ctx) =>
        setup.runtime.execute('mcp.everything.trigger-elicitation-request', {}, ctx),
      );
      expect(result.ok).toBe(true);
      expect(result.output).toMatch(/User provided the requested information/);
      expect(result.output).toMatch(/Name: Ada Lovelace/);
      expect(result.output).toMatch(/Favorite Integer: 7/);
      expect(person.asked).toHaveLength(1);
      const [{ request, context }] = person.asked as [{ request: InteractionRequest; context: InteractionContext }];
      expect(request).toMatchObject({ kind: 'form', message: expect.stringMatching(/provide inputs/), schema: { type: 'object', required: ['name'] } });
      expect(context).toMatchObject({ source: 'mcp', origin: 'everything', planId: 'form-plan', toolName: 'mcp.everything.trigger-elicitation-request' });
      expect(context.signal).toBeInstanceOf(AbortSignal);
      expect(
        setup.logger.at('info').some((entry) => /asked a person \(form: .*\): accept/.test(entry.message) && entry.fields?.['planId'] === 'form-plan'),
      ).toBe(true);
    } finally {
      await setup.close();
    }
  });

  it.each<[string, InteractionResponse]>([
    ['fills in one field', { action: 'accept', content: { name: 'Ada Lovelace' } }],
    ['accepts without values', { action: 'accept' }],
  ])('a form the person %s: the server gets the schema’s defaults for the fields left out (SEP-1034)', async (_case, answer) => {
    const setup = everything({ interactionHandler: new ScriptedPerson(() => answer) });
    try {
      const result = await setup.runtime.runPlan({}, (ctx) => setup.runtime.execute('mcp.everything.trigger-elicitation-request', {}, ctx));
      expect(result.ok).toBe(true);
      const raw = JSON.parse(String(result.output).split('Raw result: ')[1] as string) as { action: string; content: Record<string, unknown> };
      expect(raw.action).toBe('accept');
      expect(raw.content).toMatchObject({ firstLine: 'It was a dark and stormy night.', integer: 42, number: 3.14 });
      if (answer.action === 'accept' && answer.content !== undefined) expect(raw.content['name']).toBe('Ada Lovelace');
      else expect(raw.content).not.toHaveProperty('name');
    } finally {
      await setup.close();
    }
  });

  it('a form the person declines: the server is told, and the decline is logged with the plan', async () => {
    const person = new ScriptedPerson(() => ({ action: 'decline' }));
    const setup = everything({ interactionHandler: person });
    try {
      const result = await setup.runtime.runPlan({ planId: 'decline-plan' }, (ctx) =>
        setup.runtime.execute('mcp.everything.trigger-elicitation-request', {}, ctx),
      );
      expect(result.output).toMatch(/User declined to provide the requested information/);
      expect(setup.logger.at('info').some((entry) => /: decline\.$/.test(entry.message) && entry.fields?.['planId'] === 'decline-plan')).toBe(true);
    } finally {
      await setup.close();
    }
  });

  it('a person who takes longer than callTimeoutMs to answer does not time the call out', async () => {
    const slow: InteractionHandler = {
      interact: async () => {
        await new Promise((resolve) => setTimeout(resolve, 1_500));
        return { action: 'accept', content: { name: 'Slow Typist' } };
      },
    };
    const setup = everything({ interactionHandler: slow }, { callTimeoutMs: 500 });
    try {
      const result = await setup.runtime.runPlan({}, (ctx) => setup.runtime.execute('mcp.everything.trigger-elicitation-request', {}, ctx));
      expect(result.ok).toBe(true);
      expect(result.output).toMatch(/Name: Slow Typist/);
    } finally {
      await setup.close();
    }
  });

  it('cancelling the plan while a person is asked withdraws the question', async () => {
    let withdrawn = false;
    let asked!: () => void;
    const questionAsked = new Promise<void>((resolve) => (asked = resolve));
    const waiting: InteractionHandler = {
      interact: (_request, context) =>
        new Promise((resolve) => {
          asked();
          context.signal.addEventListener('abort', () => {
            withdrawn = true;
            resolve({ action: 'cancel' });
          });
        }),
    };
    const setup = everything({ interactionHandler: waiting });
    try {
      const ctx = setup.runtime.createPlan();
      const call = setup.runtime.execute('mcp.everything.trigger-elicitation-request', {}, ctx);
      await questionAsked;
      ctx.cancellationToken.cancel('the person left');
      expect((await rejectionOf(call)).code).toBe('TOOL_CANCELLED');
      await waitFor(() => withdrawn, 10_000, 'the question to be withdrawn');
      await setup.runtime.endPlan(ctx);
    } finally {
      await setup.close();
    }
  });

  it('a URL, by request and by error -32042: the person is asked to open each page, and the call is retried once', async () => {
    const person = new ScriptedPerson((request) => (request.kind === 'url' ? { action: 'accept' } : { action: 'decline' }));
    const setup = everything({ interactionHandler: person });
    try {
      await setup.runtime.runPlan({}, async (ctx) => {
        const byRequest = await setup.runtime.execute(
          'mcp.everything.trigger-url-elicitation',
          { url: 'https://example.com/consent', elicitationId: 'one' },
          ctx,
        );
        expect(byRequest.output).toMatch(/User completed the URL elicitation flow/);
        expect(person.asked.at(-1)?.request).toEqual({
          kind: 'url',
          purpose: 'elicitation',
          url: 'https://example.com/consent',
          message: expect.any(String),
          id: 'one',
        });
        const byError = await setup.runtime.execute('mcp.everything.trigger-url-elicitation', { url: 'https://example.com/second', errorPath: true }, ctx);
        expect(byError.ok).toBe(true);
        expect(byError.output).toMatch(/User completed the URL elicitation flow/);
        // The prerequisite page (from the error), then the page of the retried call.
        expect(person.asked.slice(1).map(({ request }) => (request as { url: string }).url)).toEqual([
          'https://modelcontextprotocol.io/',
          'https://example.com/second',
        ]);
      });
    } finally {
      await setup.close();
    }
  });

  it('a URL page the person declines fails the call with MCP_URL_ELICITATION_REQUIRED', async () => {
    const setup = everything({ interactionHandler: new ScriptedPerson(() => ({ action: 'decline' })) });
    try {
      const result = await setup.runtime.runPlan({}, (ctx) =>
        setup.runtime.execute('mcp.everything.trigger-url-elicitation', { url: 'https://example.com/x', errorPath: true }, ctx),
      );
      expect(result.ok).toBe(false);
      expect(result.ok === false && result.error).toMatchObject({ code: 'MCP_URL_ELICITATION_REQUIRED', server: 'everything' });
      expect(result.ok === false && result.error.message).toMatch(/needs a person to open a page first, and the person declined/);
    } finally {
      await setup.close();
    }
  });
});

describe('sampling through the sampling handler', () => {
  it('generates the message with the service’s model, counted per plan and refused past the limit', async () => {
    const model = new EchoModel();
    const setup = everything({ samplingHandler: model, maxSamplingRequestsPerPlan: 2 });
    try {
      await setup.runtime.runPlan({ planId: 'sampling-plan' }, async (ctx) => {
        for (const prompt of ['one', 'two']) {
          const result = await setup.runtime.execute('mcp.everything.trigger-sampling-request', { prompt, maxTokens: 50 }, ctx);
          expect(result.ok).toBe(true);
          expect(result.output).toMatch(new RegExp(`model says: .*${prompt}`));
          expect(result.output).toMatch(/"model": "echo-model"/);
        }
        const third = await setup.runtime.execute('mcp.everything.trigger-sampling-request', { prompt: 'three', maxTokens: 50 }, ctx);
        expect(third.ok).toBe(false);
        expect(third.ok === false && third.error.message).toMatch(/limit of 2 sampling request/);
      });
      expect(model.requests).toHaveLength(2);
      expect(model.requests[0]?.request).toMatchObject({ maxTokens: 50, systemPrompt: 'You are a helpful test server.', messages: [{ role: 'user' }] });
      expect(model.requests[0]?.context).toMatchObject({
        source: 'mcp',
        origin: 'everything',
        planId: 'sampling-plan',
        toolName: 'mcp.everything.trigger-sampling-request',
      });
      const traced = setup.logger.at('info').filter((entry) => entry.fields?.['sampling'] === true);
      expect(traced).toHaveLength(2);
      expect(traced[0]?.fields).toMatchObject({ server: 'everything', planId: 'sampling-plan', model: 'echo-model', stopReason: 'endTurn' });
      expect(setup.logger.at('warn').some((entry) => /more than 2 sampled message/.test(entry.message))).toBe(true);
      // A new plan has its own allowance.
      const next = await setup.runtime.runPlan({}, (ctx) =>
        setup.runtime.execute('mcp.everything.trigger-sampling-request', { prompt: 'four', maxTokens: 5 }, ctx),
      );
      expect(next.ok).toBe(true);
    } finally {
      await setup.close();
    }
  });
});

describe('a sampling handler that fails', () => {
  it('is reported to the server as a failed request and logged; the plan goes on', async () => {
    const broken: SamplingHandler = { createMessage: async () => ({ nothing: 'useful' }) as unknown as SamplingResult };
    const setup = everything({ samplingHandler: broken });
    try {
      await setup.runtime.runPlan({}, async (ctx) => {
        const result = await setup.runtime.execute('mcp.everything.trigger-sampling-request', { prompt: 'x', maxTokens: 5 }, ctx);
        expect(result.ok).toBe(false);
        expect(result.ok === false && result.error.message).toMatch(/Sampling failed: the client produced no message/);
        // What the server was sent carries one "MCP error <code>: " prefix (its own), not two.
        expect(result.ok === false && result.error.message).not.toMatch(/MCP error -?\d+: MCP error/);
        expect(result.ok === false && result.error.message).not.toMatch(/\.\.$/);
        expect((await setup.runtime.execute('mcp.everything.get-sum', { a: 1, b: 2 }, ctx)).ok).toBe(true);
      });
      expect(setup.logger.at('warn').some((entry) => /the sampling handler returned no message/.test(entry.message))).toBe(true);
    } finally {
      await setup.close();
    }
  });
});

describe('task-based tools', () => {
  it('simulate-research-query runs as a task: created, polled with its status as progress, its result fetched', async () => {
    const setup = everything();
    try {
      const tool = await setup.runtime.describe('mcp.everything.simulate-research-query');
      expect(tool.annotations).toMatchObject({ mcpTaskSupport: 'required' });
      const progress: ToolProgress[] = [];
      const result = await setup.runtime.runPlan({}, (ctx) =>
        setup.runtime.execute('mcp.everything.simulate-research-query', { topic: 'tide pools' }, ctx, { onProgress: (item) => progress.push(item) }),
      );
      expect(result.ok).toBe(true);
      expect(result.output).toMatch(/# Research Report: tide pools/);
      const messages = progress.map((item) => item.message);
      expect(messages[0]).toMatch(/^working/);
      expect(messages).toEqual(expect.arrayContaining([expect.stringMatching(/Gathering sources/), expect.stringMatching(/Generating report/)]));
      expect(progress.map((item) => item.progress)).toEqual(progress.map((_item, index) => index + 1));
    } finally {
      await setup.close();
    }
  });

  it('a task that needs input asks the person through the interaction handler (input_required)', async () => {
    const person = new ScriptedPerson((request) =>
      request.kind === 'form' ? { action: 'accept', content: { interpretation: 'historical' } } : { action: 'decline' },
    );
    const setup = everything({ interactionHandler: person });
    try {
      const result = await setup.runtime.runPlan({ planId: 'research' }, (ctx) =>
        setup.runtime.execute('mcp.everything.simulate-research-query', { topic: 'tea', ambiguous: true }, ctx),
      );
      expect(result.ok).toBe(true);
      expect(result.output).toMatch(/\*\*Clarification\*\*: historical/);
      expect(person.asked).toHaveLength(1);
      expect(person.asked[0]?.context).toMatchObject({ planId: 'research', toolName: 'mcp.everything.simulate-research-query' });
    } finally {
      await setup.close();
    }
  });

  it('cancelling the plan cancels the task on the server', async () => {
    const setup = everything({}, { scope: 'shared' });
    try {
      const ctx = setup.runtime.createPlan();
      const running = setup.runtime.execute('mcp.everything.simulate-research-query', { topic: 'cancelled research' }, ctx, {
        onProgress: () => ctx.cancellationToken.cancel('the user changed their mind'),
      });
      const error = await rejectionOf(running);
      expect(error.code).toBe('TOOL_CANCELLED');
      const taskId = setup.logger
        .at('debug')
        .map((entry) => entry.fields?.['taskId'])
        .find((id): id is string => typeof id === 'string');
      expect(taskId).toBeDefined();
      await setup.runtime.endPlan(ctx);
      // The shared session outlives the plan: ask the server what became of the task.
      const check = setup.runtime.createPlan();
      await setup.runtime.activate('mcp.everything.echo', check);
      const session = setup.source.sessionFor('everything', check.planId);
      await waitFor(
        async () => (await session!.client.experimental.tasks.getTask(taskId as string)).status === 'cancelled',
        10_000,
        'the task to be cancelled',
      );
      await setup.runtime.endPlan(check);
    } finally {
      await setup.close();
    }
  });
});

describe('resources and prompts inside a plan', () => {
  it('lists and reads resources and gets prompts in a read-only, checkpoint-required plan, each traced', async () => {
    const setup = everything();
    try {
      const { tools } = await setup.runtime.discover();
      const read = tools.find((tool) => tool.name === 'mcp.everything.resources.read');
      expect(read?.capability).toEqual({ writes: false, checkpointable: true, idempotent: true, destructive: false, openWorld: true });
      expect(read?.description).toMatch(/demo:\/\/resource\/static\/document\//);
      expect(tools.find((tool) => tool.name === 'mcp.everything.prompts.get')?.description).toMatch(/args-prompt\(city, state\?\)/);
      await setup.runtime.runPlan({ policy: { readOnly: true, requireCheckpoint: true } }, async (ctx) => {
        const listed = await setup.runtime.execute('mcp.everything.resources.list', {}, ctx);
        expect(listed.ok).toBe(true);
        const { resources, resourceTemplates } = listed.output as { resources: { uri: string; name: string }[]; resourceTemplates: { uriTemplate: string }[] };
        const document = resources.find((resource) => resource.uri.startsWith('demo://resource/static/document/'));
        expect(document).toBeDefined();
        expect(resourceTemplates.length).toBeGreaterThan(0);
        const contents = await setup.runtime.execute('mcp.everything.resources.read', { uri: document!.uri }, ctx);
        expect(contents.ok).toBe(true);
        expect((contents.output as { contents: { uri: string; text: string }[] }).contents[0]).toMatchObject({ uri: document!.uri, text: expect.any(String) });
        expect(contents.content?.[0]).toMatchObject({ type: 'resource', resource: { uri: document!.uri } });
        const prompts = await setup.runtime.execute('mcp.everything.prompts.list', {}, ctx);
        expect((prompts.output as { prompts: { name: string }[] }).prompts.map((prompt) => prompt.name)).toEqual(
          expect.arrayContaining(['simple-prompt', 'args-prompt']),
        );
        const prompt = await setup.runtime.execute('mcp.everything.prompts.get', { name: 'args-prompt', arguments: { city: 'Lyon' } }, ctx);
        expect(prompt.ok).toBe(true);
        expect(JSON.stringify(prompt.output)).toMatch(/Lyon/);
        const unknown = await setup.runtime.execute('mcp.everything.resources.read', { uri: 'demo://no/such/thing' }, ctx);
        expect(unknown.ok === false && unknown.error).toMatchObject({ code: 'MCP_REQUEST_FAILED', mcpToolName: 'resources/read' });
        // The server's JSON-RPC error, once: the SDK prefixes "MCP error <code>: " on both sides.
        expect(unknown.ok === false && unknown.error.message).toMatch(/\(JSON-RPC error -?\d+\): (?!MCP error)/);
        expect(unknown.ok === false && unknown.error.message).not.toMatch(/MCP error -?\d+: MCP error/);
        const noPrompt = await setup.runtime.execute('mcp.everything.prompts.get', { name: 'no-such-prompt' }, ctx);
        expect(noPrompt.ok === false && noPrompt.error.message).toMatch(/\(JSON-RPC error -?\d+\): (?!MCP error)/);
        const badInput = await setup.runtime.execute('mcp.everything.resources.read', {}, ctx);
        expect(badInput.ok === false && badInput.error.code).toBe('TOOL_SCHEMA_VALIDATION_FAILED');
        // A server tool is refused in the same plan: it writes (the server is not trusted).
        const refused = await rejectionOf(setup.runtime.execute('mcp.everything.echo', { message: 'x' }, ctx));
        expect(ToolAccessDeniedError.isInstance(refused)).toBe(true);
        expect(ctx.traces.map((trace) => [trace.toolName, trace.success])).toEqual([
          ['mcp.everything.resources.list', true],
          ['mcp.everything.resources.read', true],
          ['mcp.everything.prompts.list', true],
          ['mcp.everything.prompts.get', true],
          ['mcp.everything.resources.read', false],
          ['mcp.everything.prompts.get', false],
          ['mcp.everything.resources.read', false],
          ['mcp.everything.echo', false],
        ]);
      });
    } finally {
      await setup.close();
    }
  });

  it('completes prompt arguments and resource template variables in a read-only, checkpoint-required plan, with the chosen arguments as context', async () => {
    const setup = everything();
    try {
      const complete = await setup.runtime.describe('mcp.everything.completion.complete');
      expect(complete.capability).toEqual({ writes: false, checkpointable: true, idempotent: true, destructive: false, openWorld: true });
      expect(complete.annotations).toEqual({ mcpServer: 'everything', mcpOperation: 'completion/complete' });
      await setup.runtime.runPlan({ policy: { readOnly: true, requireCheckpoint: true } }, async (ctx) => {
        const run = (input: Record<string, unknown>) => setup.runtime.execute('mcp.everything.completion.complete', input, ctx);
        const department = await run({ ref: { type: 'ref/prompt', name: 'completable-prompt' }, argument: { name: 'department', value: 'S' } });
        expect(department).toMatchObject({ ok: true, output: { completion: { values: ['Sales', 'Support'] } } });
        // The second argument's suggestions depend on the first, sent as context.
        const lead = await run({
          ref: { type: 'ref/prompt', name: 'completable-prompt' },
          argument: { name: 'name', value: '' },
          context: { arguments: { department: 'Engineering' } },
        });
        expect(lead.ok && (lead.output as { completion: { values: string[] } }).completion.values).toEqual(['Alice', 'Bob', 'Charlie']);
        const noContext = await run({ ref: { type: 'ref/prompt', name: 'completable-prompt' }, argument: { name: 'name', value: '' } });
        expect(noContext.ok && (noContext.output as { completion: { values: string[] } }).completion.values).toEqual([]);
        const template = await run({
          ref: { type: 'ref/resource', uri: 'demo://resource/dynamic/text/{resourceId}' },
          argument: { name: 'resourceId', value: '7' },
        });
        expect(template.ok && (template.output as { completion: { values: string[] } }).completion.values).toEqual(['7']);
        const unknown = await run({ ref: { type: 'ref/prompt', name: 'no-such-prompt' }, argument: { name: 'x', value: '' } });
        expect(unknown.ok === false && unknown.error).toMatchObject({ code: 'MCP_REQUEST_FAILED', mcpToolName: 'completion/complete', server: 'everything' });
        expect(unknown.ok === false && unknown.error.message).toMatch(/no-such-prompt/);
        for (const bad of [
          { ref: { type: 'ref/tool', name: 'echo' }, argument: { name: 'x', value: '' } },
          { ref: { type: 'ref/prompt', name: 'completable-prompt' }, argument: { name: 'department' } },
          { ref: { type: 'ref/prompt', name: 'completable-prompt' }, argument: { name: 'department', value: 'S' }, context: { arguments: { department: 1 } } },
          { ref: { type: 'ref/prompt', name: 'completable-prompt', extra: true }, argument: { name: 'department', value: 'S' } },
        ]) {
          const refused = await run(bad);
          expect(refused.ok === false && refused.error.code).toBe('TOOL_SCHEMA_VALIDATION_FAILED');
        }
        expect(ctx.traces.map((trace) => trace.success)).toEqual([true, true, true, true, false, false, false, false, false]);
      });
    } finally {
      await setup.close();
    }
  });

  it('a server that does not declare completions gets no completion operation', async () => {
    const source = createMcpAdapter({
      servers: { mcpServers: { catalog: { command: process.execPath, args: [join(__dirname, '__fixtures__', 'catalog-server.js')] } } },
      logger: new RecordingLogger(),
    });
    const runtime = new ToolRuntime({ sources: [source] });
    try {
      const names = (await runtime.discover()).tools.map((tool) => tool.name);
      expect(names).toContain('mcp.catalog.prompts.get');
      expect(names).not.toContain('mcp.catalog.completion.complete');
    } finally {
      await runtime.dispose();
    }
  });

  it('a subscription reports updates to onResourceUpdated with the plan, and ends with the plan', async () => {
    const setup = everything();
    const updates: McpResourceUpdate[] = [];
    const unsubscribe = setup.source.onResourceUpdated((update) => updates.push(update));
    try {
      const uri = 'demo://resource/dynamic/text/1';
      await setup.runtime.runPlan({ planId: 'watching' }, async (ctx) => {
        const subscribed = await setup.runtime.execute('mcp.everything.resources.subscribe', { uri }, ctx);
        expect(subscribed).toMatchObject({ ok: true, output: { uri, subscribed: true } });
        // The server's own tool starts sending updates for what the session subscribed to.
        expect((await setup.runtime.execute('mcp.everything.toggle-subscriber-updates', {}, ctx)).ok).toBe(true);
        await waitFor(() => updates.length > 0, 10_000, 'a resource update');
        expect(updates[0]).toEqual({ server: 'everything', uri, planId: 'watching' });
        expect((await setup.runtime.execute('mcp.everything.resources.unsubscribe', { uri }, ctx)).output).toEqual({ uri, subscribed: false });
      });
    } finally {
      unsubscribe();
      await setup.close();
    }
  });

  it('a new resource (resources/list_changed) refreshes what the runtime offers', async () => {
    const setup = everything({ discoverySessionReuseMs: 0 }, { scope: 'shared' });
    try {
      const before = await setup.runtime.describe('mcp.everything.resources.read');
      expect(before.description).not.toMatch(/fresh\.gz/);
      await setup.runtime.runPlan({}, async (ctx) => {
        const gzip = await setup.runtime.execute(
          'mcp.everything.gzip-file-as-resource',
          { name: 'fresh.gz', data: `data:text/plain;base64,${Buffer.from('hello').toString('base64')}`, outputType: 'resourceLink' },
          ctx,
        );
        expect(gzip.ok).toBe(true);
      });
      await waitFor(
        async () => /fresh\.gz/.test((await setup.runtime.describe('mcp.everything.resources.read')).description),
        10_000,
        'the resource in the description',
      );
    } finally {
      await setup.close();
    }
  });
});

describe('server log messages', () => {
  it('reach the runtime logger at their level, each once', async () => {
    const setup = everything({}, { scope: 'shared' });
    try {
      await setup.runtime.runPlan({}, async (ctx) => {
        expect((await setup.runtime.execute('mcp.everything.toggle-simulated-logging', {}, ctx)).ok).toBe(true);
      });
      await waitFor(() => setup.logger.entries.some((entry) => entry.fields?.['mcpLogLevel'] !== undefined), 10_000, 'a server log message');
      const first = setup.logger.entries.find((entry) => entry.fields?.['mcpLogLevel'] !== undefined);
      const level = first?.fields?.['mcpLogLevel'] as string;
      const expected = level === 'debug' ? 'debug' : level === 'info' || level === 'notice' ? 'info' : level === 'warning' ? 'warn' : 'error';
      expect(first?.level).toBe(expected);
      expect(first?.message).toMatch(/^MCP server 'everything'.*: .*message/i);
      expect(setup.logger.entries.filter((entry) => entry.message === first?.message && entry.fields?.['mcpLogLevel'] !== undefined)).toHaveLength(1);
    } finally {
      await setup.close();
    }
  });
});

describe('prompts/list_changed', () => {
  it('refreshes what the runtime offers', async () => {
    const logger = new RecordingLogger();
    const source = createMcpAdapter({
      servers: { mcpServers: { catalog: { command: process.execPath, args: [join(__dirname, '__fixtures__', 'catalog-server.js')], scope: 'shared' } } },
      logger,
    });
    const runtime = new ToolRuntime({ sources: [source], logger });
    try {
      const before = await runtime.describe('mcp.catalog.prompts.get');
      expect(before.description).toMatch(/It offers: greeting\./);
      await runtime.runPlan({}, (ctx) => runtime.execute('mcp.catalog.add-prompt', {}, ctx));
      await waitFor(async () => /farewell/.test((await runtime.describe('mcp.catalog.prompts.get')).description), 10_000, 'the new prompt');
      const prompt = await runtime.runPlan({}, (ctx) => runtime.execute('mcp.catalog.prompts.get', { name: 'farewell' }, ctx));
      expect(prompt.output).toEqual({ messages: [{ role: 'user', content: { type: 'text', text: 'Goodbye!' } }] });
    } finally {
      await runtime.dispose();
    }
  });
});
