// A CommonJS service: the runtime plus the built-in adapter, one read-only plan.
// Usage: node plan.cjs <folder holding note.txt>
const { pathToFileURL } = require('node:url');
// @ca/tool-lifecycle first: it loads the reflect-metadata polyfill tsyringe needs.
const { registerToolRuntime, TOOL_RUNTIME, ToolAccessDeniedError } = require('@ca/tool-lifecycle');
const { registerBuiltinAdapter } = require('@ca/adapters-builtin');
const { container } = require('tsyringe');

async function main() {
  const folder = process.argv[2];
  const services = container.createChildContainer();
  registerBuiltinAdapter(services);
  registerToolRuntime(services);
  const runtime = services.resolve(TOOL_RUNTIME);
  const resources = [{ id: 'work', kind: 'filesystem', uri: pathToFileURL(folder).href, access: 'read' }];
  const report = {};
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
  report.runtimeModule = require.resolve('@ca/tool-lifecycle');
  process.stdout.write(`${JSON.stringify(report)}\n`);
}

main().catch((error) => {
  process.stderr.write(`${error && error.stack ? error.stack : error}\n`);
  process.exit(1);
});
