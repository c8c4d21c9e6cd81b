'use strict';
// What a user waits for: `agents tools run` as a whole process, from start to
// exit, against `node -e 0` started in the same rounds. Rounds interleave the
// cases (each process once per round) and ratios are medians of per-round
// ratios, so the machine's load hits every case alike.
//
// - a custom tool (demo.word-count) with the demo configuration, against the
//   same with built-ins and the custom module only: the demo configuration's
//   MCP server, skills and wrapped tools must cost (almost) nothing when the
//   command does not need them (target ≤ 1.2×);
// - a built-in tool (builtin.fs.read), demo configuration against built-ins
//   only (target ≤ 1.2×);
// - an MCP tool (mcp.everything.get-sum) with the demo configuration: one
//   server start, the discovery session reused for the plan (target ≤ 1.5 s).
//
// BENCH_ROUNDS sets the number of rounds (default 15).
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { comparePaired, formatNs, runWhenMain } = require('./harness');

const root = path.resolve(__dirname, '..', '..');
const bin = path.join(root, 'packages', 'cli', 'bin', 'agents.js');
const demoConfig = path.join(root, 'examples', 'agents.config.json');

function writeConfigs(folder, workspace) {
  const demo = JSON.parse(fs.readFileSync(demoConfig, 'utf8'));
  const resources = [{ id: 'workspace', path: workspace, access: 'write' }];
  const builtinOnly = path.join(folder, 'builtin-only.json');
  fs.writeFileSync(builtinOnly, JSON.stringify({ runtime: demo.runtime, resources, builtin: demo.builtin }));
  const builtinAndCustom = path.join(folder, 'builtin-and-custom.json');
  fs.writeFileSync(
    builtinAndCustom,
    JSON.stringify({ runtime: demo.runtime, resources, builtin: demo.builtin, custom: { modules: [path.join(root, 'examples', 'custom-tools.js')] } }),
  );
  return { builtinOnly, builtinAndCustom };
}

async function run() {
  if (!fs.existsSync(path.join(root, 'packages', 'cli', 'dist', 'bin.js'))) throw new Error('Build first: npm run build (npm run bench builds).');
  const workspace = fs.mkdtempSync(path.join(os.tmpdir(), 'ca-cli-bench-'));
  try {
    fs.writeFileSync(path.join(workspace, 'README.md'), '# Bench\n\nHello.\n');
    const { builtinOnly, builtinAndCustom } = writeConfigs(workspace, workspace);
    const env = { ...process.env, DEMO_WORKSPACE: workspace, DEMO_ROOT: root };
    const agents = (config, tool, input, expected) => async () => {
      const result = spawnSync(process.execPath, [bin, '-c', config, 'tools', 'run', tool, '--input', JSON.stringify(input)], {
        cwd: workspace,
        env,
        encoding: 'utf8',
      });
      if (result.status !== 0 || !result.stdout.includes(expected)) {
        throw new Error(`agents tools run ${tool} with ${path.basename(config)} exited ${result.status}: ${result.stdout}${result.stderr}`);
      }
    };
    const wordCount = ['demo.word-count', { text: 'one two three' }, '"words": 3'];
    const read = ['builtin.fs.read', { resource: 'workspace', path: 'README.md' }, 'Hello.'];
    const cases = {
      'node -e 0': {
        fn: async () => {
          const result = spawnSync(process.execPath, ['-e', '0']);
          if (result.status !== 0) throw new Error('node -e 0 failed');
        },
      },
      'custom, demo configuration': { fn: agents(demoConfig, ...wordCount) },
      'custom, built-ins + custom module': { fn: agents(builtinAndCustom, ...wordCount) },
      'built-in, demo configuration': { fn: agents(demoConfig, ...read) },
      'built-in, built-ins only': { fn: agents(builtinOnly, ...read) },
      'MCP get-sum, demo configuration': { fn: agents(demoConfig, 'mcp.everything.get-sum', { a: 19, b: 23 }, 'The sum of 19 and 23 is 42.') },
    };
    const rounds = Number(process.env.BENCH_ROUNDS ?? 15);
    const { medians, ratios } = await comparePaired(cases, { baseline: 'node -e 0', rounds, iterations: 1, warmup: 1 });
    const node = medians['node -e 0'];
    const versus = (subject, baseline) => ratios[subject] / ratios[baseline];
    const customRatio = versus('custom, demo configuration', 'custom, built-ins + custom module');
    const builtinRatio = versus('built-in, demo configuration', 'built-in, built-ins only');
    const mcp = medians['MCP get-sum, demo configuration'];
    const report = (name) => ({
      name: `CLI: agents tools run, ${name}`,
      baseline: '`node -e 0`, same rounds',
      baselineNs: node,
      subjectNs: medians[name],
      ratio: ratios[name],
      target: 'report',
      pass: true,
    });
    return [
      report('custom, demo configuration'),
      report('custom, built-ins + custom module'),
      report('built-in, demo configuration'),
      report('built-in, built-ins only'),
      {
        name: 'CLI: tools run demo.word-count (custom), demo configuration vs built-ins + custom module only',
        baseline: 'the same command without the MCP server, skills and wrapped tools',
        baselineValue: `${ratios['custom, built-ins + custom module'].toFixed(2)}× node -e 0`,
        subjectValue: `${ratios['custom, demo configuration'].toFixed(2)}× node -e 0`,
        ratio: customRatio,
        maxRatio: 1.2,
        target: 1.2,
        note: `median of per-round ratios to node -e 0 (${formatNs(node)}), ${rounds} rounds`,
      },
      {
        name: 'CLI: tools run builtin.fs.read, demo configuration vs built-ins only',
        baseline: 'the same command with only "builtin" configured',
        baselineValue: `${ratios['built-in, built-ins only'].toFixed(2)}× node -e 0`,
        subjectValue: `${ratios['built-in, demo configuration'].toFixed(2)}× node -e 0`,
        ratio: builtinRatio,
        maxRatio: 1.2,
        target: 1.2,
        note: `median of per-round ratios to node -e 0, ${rounds} rounds`,
      },
      {
        name: 'CLI: tools run mcp.everything.get-sum (server-everything over stdio), demo configuration',
        baseline: '`node -e 0`, same rounds',
        baselineNs: node,
        subjectNs: mcp,
        ratio: ratios['MCP get-sum, demo configuration'],
        target: '≤ 1.5 s',
        pass: mcp <= 1.5e9,
        note: 'start to exit: one server start (its discovery session serves the plan)',
      },
    ];
  } finally {
    fs.rmSync(workspace, { recursive: true, force: true });
  }
}

module.exports = { run };
runWhenMain(module, run);
