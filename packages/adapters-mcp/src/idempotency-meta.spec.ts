import { join } from 'node:path';
import { ToolRuntime } from '@ca/tool-lifecycle';
import { RecordingLogger } from '@ca/tool-lifecycle/testing';
import { createMcpAdapter } from './mcp-adapter';

jest.setTimeout(60_000);

const META_ECHO_SERVER = join(__dirname, '__fixtures__', 'meta-echo-server.js');
const META_ECHO_TASK_SERVER = join(__dirname, '__fixtures__', 'meta-echo-task-server.js');
const KEY = 'internal.ca/idempotency-key';

describe('tools/call carries the idempotency key in _meta', () => {
  const runtimes: ToolRuntime[] = [];
  const runtime = (): ToolRuntime => {
    const logger = new RecordingLogger();
    const made = new ToolRuntime({
      sources: [
        createMcpAdapter({ servers: { mcpServers: { meta: { command: process.execPath, args: [META_ECHO_SERVER], trustAnnotations: true } } }, logger }),
      ],
      logger,
    });
    runtimes.push(made);
    return made;
  };
  afterEach(async () => {
    for (const made of runtimes.splice(0)) await made.dispose();
  });

  type Meta = { meta: Record<string, unknown> };

  it("sends the execution's key for a tool that may write, next to the progress token of a caller that listens; the same plan restarted sends the same keys", async () => {
    const calls = async (): Promise<unknown[]> => {
      const made = runtime();
      return made.runPlan({ planId: 'meta-plan' }, async (ctx) => {
        const first = await made.execute<Meta>('mcp.meta.note', { text: 'a' }, ctx, { onProgress: () => undefined });
        const second = await made.execute<Meta>('mcp.meta.note', { text: 'a' }, ctx);
        expect(first.ok && second.ok).toBe(true);
        const firstMeta = first.ok ? first.output.meta : {};
        expect(firstMeta[KEY]).toMatch(/^[A-Za-z0-9_-]{43}$/);
        expect(first.trace.idempotencyKey).toBe(firstMeta[KEY]);
        expect(firstMeta['progressToken']).toBeDefined();
        // The second call has no progress listener: it carries the key and no progress token.
        const secondMeta = second.ok ? second.output.meta : {};
        expect(secondMeta[KEY]).toMatch(/^[A-Za-z0-9_-]{43}$/);
        expect(secondMeta).not.toHaveProperty('progressToken');
        return [firstMeta[KEY], second.ok ? second.output.meta[KEY] : undefined];
      });
    };
    const keys = await calls();
    expect(keys[0]).not.toBe(keys[1]);
    expect(await calls()).toEqual(keys);
  });

  // Its annotations are believed only because the configuration trusts the server: an untrusted server's tools all count as writing.
  it('sends no key for a tool that a trusted server says is read-only', async () => {
    const made = runtime();
    const result = await made.runPlan({}, (ctx) => made.execute<Meta>('mcp.meta.look', {}, ctx));
    expect(result.ok).toBe(true);
    expect(result.ok ? Object.keys(result.output.meta) : []).not.toContain(KEY);
  });

  it('sends the same key in the tools/call that creates a task as a plain call would, and the same again for the plan restarted', async () => {
    const keyOfTaskCall = async (): Promise<unknown> => {
      const logger = new RecordingLogger();
      const made = new ToolRuntime({
        sources: [createMcpAdapter({ servers: { mcpServers: { tasks: { command: process.execPath, args: [META_ECHO_TASK_SERVER] } } }, logger })],
        logger,
      });
      runtimes.push(made);
      return made.runPlan({ planId: 'task-meta-plan' }, async (ctx) => {
        const result = await made.execute<Meta>('mcp.tasks.note-task', {}, ctx);
        expect(result).toMatchObject({ ok: true });
        return result.ok ? result.output.meta[KEY] : undefined;
      });
    };
    const key = await keyOfTaskCall();
    expect(key).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(await keyOfTaskCall()).toBe(key);
  });
});
