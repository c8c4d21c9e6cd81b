// The same plan from an ES module: named imports of CommonJS packages.
// Usage: node plan.mjs <folder holding note.txt>
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
// @ca/tool-lifecycle first: it loads the reflect-metadata polyfill tsyringe needs.
import { registerToolRuntime, TOOL_RUNTIME, ToolAccessDeniedError, ToolRuntime } from '@ca/tool-lifecycle';
import { registerBuiltinAdapter, BUILTIN_TOOL_NAMES } from '@ca/adapters-builtin';
import { container } from 'tsyringe';

const folder = process.argv[2];
const services = container.createChildContainer();
registerBuiltinAdapter(services);
registerToolRuntime(services);
const runtime = services.resolve(TOOL_RUNTIME);
const resources = [{ id: 'work', kind: 'filesystem', uri: pathToFileURL(folder).href, access: 'read' }];
const report = { isToolRuntime: runtime instanceof ToolRuntime, builtinTools: BUILTIN_TOOL_NAMES.length };
await runtime.runPlan({ policy: { readOnly: true }, resources, onEnd: (end) => (report.deactivated = end.deactivated) }, async (ctx) => {
  const read = await runtime.execute('builtin.fs.read', { path: 'note.txt' }, ctx);
  report.ok = read.ok;
  report.content = read.ok ? read.output.content : String(read.error);
  report.trace = { toolName: read.trace.toolName, success: read.trace.success };
  try {
    await runtime.execute('builtin.fs.write', { path: 'note.txt', content: 'overwritten' }, ctx);
    report.writeRefused = false;
  } catch (error) {
    report.writeRefused = ToolAccessDeniedError.isInstance(error) && error.code;
  }
});
report.runtimeModule = createRequire(import.meta.url).resolve('@ca/tool-lifecycle');
process.stdout.write(`${JSON.stringify(report)}\n`);
