// The workspace of examples/code-mode.mjs: 40 source files in a temporary folder, the release
// they changed since (a manifest of each file's SHA-256 at v1.4.0), the list of deprecated APIs,
// and the tools of three sources over them — built-in file tools (@ca/adapters-builtin), custom
// tools (@ca/adapters-custom: what changed since a release, an issue tracker that keeps its
// issues in a JSON file of the workspace) and a wrapped tool (@ca/adapters-wrapped: `issues.open`,
// the tracker's create with the `deprecation` label fixed).
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';

const require = createRequire(import.meta.url);
const { createBuiltinAdapter } = require('../packages/adapters-builtin/dist/index.js');
const { createCustomAdapter, defineTool } = require('../packages/adapters-custom/dist/index.js');
const { createWrappedAdapter, wrapTool } = require('../packages/adapters-wrapped/dist/index.js');
const { resourceFromPath } = require('../packages/tool-context/dist/index.js');

export const DEPRECATED = ['legacyFetch', 'createClientV1', 'parseQueryString'];
const AREAS = ['http', 'auth', 'cache', 'queue', 'billing', 'search', 'users', 'reports'];
const KINDS = ['client', 'server', 'handler', 'store', 'utils'];

const sha256 = (text) => createHash('sha256').update(text).digest('hex');

/** The source of file `index` as it is now, and as it was at the release. */
function source(index, released) {
  const area = AREAS[index % AREAS.length];
  const lines = [`// src/${area}: ${KINDS[index % KINDS.length]} ${index}`, `import { fetchJson } from '../shared';`, ''];
  lines.push(`export async function load${index}(id: string) {`, `  return fetchJson('/${area}/' + id);`, '}');
  // Since the release: every third file changed; among them, these call a deprecated API.
  if (!released && index % 3 === 0) {
    lines.push('', `export const revision${index} = ${index * 7};`);
    if (index % 9 === 0) lines.push(`export const old${index} = ${DEPRECATED[(index / 9) % DEPRECATED.length]}('/${area}');`);
  }
  // One file that did not change calls a deprecated API too: it must not be reported.
  if (index === 4) lines.push(`export const kept = legacyFetch('/kept');`);
  return `${lines.join('\n')}\n`;
}

/** Creates the workspace; returns its folder and the files' paths. */
export function createWorkspace() {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'ca-code-mode-example-'));
  const files = [];
  const manifest = {};
  for (let index = 0; index < 40; index++) {
    const file = `src/${AREAS[index % AREAS.length]}/${KINDS[index % KINDS.length]}${index}.ts`;
    fs.mkdirSync(path.join(root, path.dirname(file)), { recursive: true });
    fs.writeFileSync(path.join(root, file), source(index, false));
    manifest[file] = sha256(source(index, true));
    files.push(file);
  }
  fs.mkdirSync(path.join(root, '.releases'));
  fs.writeFileSync(path.join(root, '.releases', 'v1.4.0.json'), JSON.stringify({ tag: 'v1.4.0', files: manifest }, null, 2));
  fs.writeFileSync(path.join(root, 'DEPRECATIONS.md'), ['# Deprecated APIs', '', ...DEPRECATED.map((name) => `- \`${name}\` (removed in 2.0)`), ''].join('\n'));
  fs.writeFileSync(path.join(root, 'issues.json'), '[]\n');
  return { root, files };
}

/** The tools of the three sources over a workspace folder. */
export function workspaceSources(root) {
  const releases = defineTool({
    name: 'releases.changed_files',
    description: 'Lists the files of the workspace whose content changed since a release (by SHA-256 against the release manifest).',
    inputSchema: {
      type: 'object',
      properties: { since: { type: 'string', description: 'The release tag, e.g. v1.4.0.' } },
      required: ['since'],
      additionalProperties: false,
    },
    capability: { writes: false, checkpointable: true, idempotent: true, openWorld: false },
    execute: ({ since }) => {
      if (!/^v\d+\.\d+\.\d+$/.test(since)) throw new Error(`Not a release tag: ${since}.`);
      const manifest = JSON.parse(fs.readFileSync(path.join(root, '.releases', `${since}.json`), 'utf8'));
      return Object.entries(manifest.files)
        .filter(([file, digest]) => sha256(fs.readFileSync(path.join(root, file), 'utf8')) !== digest)
        .map(([file]) => file)
        .sort();
    },
  });
  const latest = defineTool({
    name: 'releases.latest',
    description: 'The tag of the latest release.',
    inputSchema: { type: 'object', properties: {}, additionalProperties: false },
    capability: { writes: false, checkpointable: true, idempotent: true, openWorld: false },
    execute: () =>
      fs
        .readdirSync(path.join(root, '.releases'))
        .map((name) => name.replace(/\.json$/, ''))
        .sort()
        .at(-1),
  });
  const create = defineTool({
    name: 'tracker.create_issue',
    description: 'Opens an issue in the tracker; returns its number.',
    inputSchema: {
      type: 'object',
      properties: { title: { type: 'string', minLength: 1 }, body: { type: 'string' }, labels: { type: 'array', items: { type: 'string' } } },
      required: ['title', 'body'],
      additionalProperties: false,
    },
    capability: { writes: true, checkpointable: false, idempotent: false, openWorld: false },
    execute: ({ title, body, labels }) => {
      const file = path.join(root, 'issues.json');
      const issues = JSON.parse(fs.readFileSync(file, 'utf8'));
      const number = issues.length + 1;
      issues.push({ number, title, body, labels: labels ?? [] });
      fs.writeFileSync(file, `${JSON.stringify(issues, null, 2)}\n`);
      return { number };
    },
  });
  const custom = createCustomAdapter({ tools: [releases, latest, create] });
  const builtin = createBuiltinAdapter({ tools: ['builtin.fs.read', 'builtin.fs.grep'] });
  const wrapped = createWrappedAdapter({
    tools: [
      wrapTool(create, {
        name: 'issues.open',
        description: 'Opens an issue in the tracker, labelled deprecation; returns its number.',
        fixedArguments: { labels: ['deprecation'] },
      }),
    ],
  });
  return { sources: [builtin, custom, wrapped], resources: [resourceFromPath({ id: 'workspace', path: root, access: 'read' })] };
}
