import fs from 'node:fs';
import path from 'node:path';
import { readJson, writeJson, type Tree } from '@nx/devkit';
import { createTreeWithEmptyWorkspace } from '@nx/devkit/testing';
import { KNOWN_TOOL_SOURCE_KINDS, MAX_TOOL_SOURCE_KIND_LENGTH, isToolSourceKind } from '@ca/domain';
import { KNOWN_SOURCE_KINDS, MAX_SOURCE_KIND_LENGTH, adapterGenerator, adapterNames } from './generator';

const root = 'packages/adapters-jira';
const workspaceRoot = path.resolve(__dirname, '..', '..', '..', '..', '..');
const LICENSE_TEXT = 'MIT License\n\nCopyright (c) 2026 The test workspace authors\n';
const REPOSITORY_URL = 'git+https://git.example.test/team/workspace.git';

/** The part of a README's "Install" section every package shares: from the heading to the package's own install command. */
function sharedInstallText(readme: string): string {
  const start = readme.indexOf('## Install\n');
  const end = readme.indexOf('```sh\n', start);
  return start === -1 || end === -1 ? '' : readme.slice(start, end);
}

function seedCorePackages(tree: Tree, version: string): void {
  for (const name of ['domain', 'schema', 'tool-context']) {
    writeJson(tree, `packages/${name}/package.json`, { name: `@ca/${name}`, version });
  }
  writeJson(tree, 'packages/tool-lifecycle/package.json', {
    name: '@ca/tool-lifecycle',
    version,
    dependencies: { tsyringe: '^4.11.0' },
  });
}

describe('adapter generator', () => {
  let tree: Tree;

  beforeEach(() => {
    tree = createTreeWithEmptyWorkspace();
    writeJson(tree, 'tsconfig.base.json', {
      compilerOptions: { strict: true, paths: { '@ca/domain': ['./packages/domain/src/index.ts'] } },
    });
    tree.write('LICENSE', LICENSE_TEXT);
    // A package that is none of the core peers: it only names the repository.
    writeJson(tree, 'packages/adapters-builtin/package.json', {
      name: '@ca/adapters-builtin',
      version: '0.3.0',
      repository: { type: 'git', url: REPOSITORY_URL, directory: 'packages/adapters-builtin' },
    });
  });

  it('creates every file of an adapter package', async () => {
    await adapterGenerator(tree, { name: 'jira' });

    const files = tree
      .listChanges()
      .map((change) => change.path)
      .filter((path) => path.startsWith(`${root}/`))
      .sort();
    expect(files).toEqual(
      [
        'CHANGELOG.md',
        'LICENSE',
        'README.md',
        'jest.config.js',
        'package.json',
        'project.json',
        'src/index.spec.ts',
        'src/index.ts',
        'src/jira-adapter-error.spec.ts',
        'src/jira-adapter-error.ts',
        'src/jira-tool-source.spec.ts',
        'src/jira-tool-source.ts',
        'src/register-jira-adapter.spec.ts',
        'src/register-jira-adapter.ts',
        'tsconfig.json',
        'tsconfig.lib.json',
      ].map((file) => `${root}/${file}`),
    );
  });

  it('writes a publishable manifest with the core packages and tsyringe as peer dependencies', async () => {
    seedCorePackages(tree, '0.4.2');
    await adapterGenerator(tree, { name: 'jira' });

    expect(readJson(tree, `${root}/package.json`)).toEqual({
      name: '@ca/adapters-jira',
      version: '0.1.0',
      description: 'Jira tools as a tool source.',
      license: 'MIT',
      repository: { type: 'git', url: REPOSITORY_URL, directory: 'packages/adapters-jira' },
      type: 'commonjs',
      main: './dist/index.js',
      types: './dist/index.d.ts',
      exports: {
        '.': { types: './dist/index.d.ts', default: './dist/index.js' },
        './package.json': './package.json',
      },
      files: [
        'dist',
        '!dist/**/*.spec.*',
        '!dist/**/__fixtures__',
        'src',
        '!src/**/*.spec.ts',
        '!src/**/__fixtures__',
        '!src/**/*.test-helper.ts',
        'README.md',
        'CHANGELOG.md',
        'LICENSE',
      ],
      engines: { node: '>=20' },
      publishConfig: { access: 'restricted' },
      sideEffects: false,
      peerDependencies: {
        '@ca/domain': '^0.4.2',
        '@ca/tool-context': '^0.4.2',
        '@ca/tool-lifecycle': '^0.4.2',
        tsyringe: '^4.11.0',
      },
    });
  });

  it('falls back to ^0.1.0 and tsyringe ^4.10.0 when the core packages are not in the tree', async () => {
    await adapterGenerator(tree, { name: 'jira' });
    const manifest = readJson(tree, `${root}/package.json`);
    expect(manifest.peerDependencies).toEqual({
      '@ca/domain': '^0.1.0',
      '@ca/tool-context': '^0.1.0',
      '@ca/tool-lifecycle': '^0.1.0',
      tsyringe: '^4.10.0',
    });
    expect(manifest.dependencies).toBeUndefined();
  });

  it('tags the project as a public adapter whose targets come from nx.json', async () => {
    await adapterGenerator(tree, { name: 'jira' });
    expect(readJson(tree, `${root}/project.json`)).toEqual({
      $schema: '../../node_modules/nx/schemas/project-schema.json',
      name: '@ca/adapters-jira',
      sourceRoot: `${root}/src`,
      projectType: 'library',
      tags: ['layer:adapter', 'scope:adapter', 'npm:public'],
      targets: { build: {}, typecheck: {}, lint: {}, test: {} },
    });
  });

  it('writes tsconfig and jest files in the shape of the other packages', async () => {
    await adapterGenerator(tree, { name: 'jira' });
    expect(readJson(tree, `${root}/tsconfig.json`)).toEqual({
      extends: '../../tsconfig.base.json',
      compilerOptions: { types: ['node', 'jest'], noEmit: true },
      include: ['src/**/*.ts'],
    });
    expect(readJson(tree, `${root}/tsconfig.lib.json`)).toEqual({
      extends: '../../tsconfig.base.json',
      compilerOptions: { rootDir: 'src', outDir: 'dist', paths: {}, types: ['node'] },
      include: ['src/**/*.ts'],
      exclude: ['src/**/*.spec.ts', 'src/**/__fixtures__/**', 'src/**/*.test-helper.ts'],
    });
    expect(tree.read(`${root}/jest.config.js`, 'utf-8')).toBe(
      "module.exports = {\n  ...require('../../jest.preset.js'),\n  displayName: '@ca/adapters-jira',\n  rootDir: __dirname,\n};\n",
    );
  });

  it('maps the new package in tsconfig.base.json when the workspace has no @ca/* mapping, and keeps the existing paths', async () => {
    await adapterGenerator(tree, { name: 'jira' });
    expect(readJson(tree, 'tsconfig.base.json').compilerOptions.paths).toEqual({
      '@ca/domain': ['./packages/domain/src/index.ts'],
      '@ca/adapters-jira': ['./packages/adapters-jira/src/index.ts'],
    });
  });

  it('leaves tsconfig.base.json untouched when @ca/* maps every package already, so the new package is the only thing that changes', async () => {
    const tsconfig = {
      compilerOptions: {
        paths: {
          '@ca/tool-lifecycle/testing': ['./packages/tool-lifecycle/src/testing/index.ts'],
          '@ca/*': ['./packages/*/src/index.ts'],
        },
      },
    };
    writeJson(tree, 'tsconfig.base.json', tsconfig);
    const before = new Map(tree.listChanges().map((change) => [change.path, change.content?.toString('utf-8')]));

    await adapterGenerator(tree, { name: 'jira' });

    const changedOutside = tree
      .listChanges()
      .filter((change) => !change.path.startsWith(`${root}/`))
      .filter((change) => !before.has(change.path) || before.get(change.path) !== change.content?.toString('utf-8'))
      .map((change) => change.path);
    expect(changedOutside).toEqual([]);
    expect(readJson(tree, 'tsconfig.base.json')).toEqual(tsconfig);
  });

  it('copies the workspace LICENSE and starts a CHANGELOG.md that nx release prepends its entries to', async () => {
    await adapterGenerator(tree, { name: 'jira', description: 'Jira issues and transitions as tools.' });
    expect(tree.read(`${root}/LICENSE`, 'utf-8')).toBe(LICENSE_TEXT);
    const changelog = tree.read(`${root}/CHANGELOG.md`, 'utf-8')!;
    // nx release puts each new entry above the file's first line: no title above the first version.
    expect(changelog).toBe('## 0.1.0\n\nFirst release. Jira issues and transitions as tools.\n');
  });

  it('takes the repository URL from the core runtime first, and gives the new package its own directory', async () => {
    writeJson(tree, 'packages/tool-lifecycle/package.json', {
      name: '@ca/tool-lifecycle',
      version: '0.2.0',
      repository: { type: 'git', url: 'git+https://git.example.test/team/core.git', directory: 'packages/tool-lifecycle' },
    });
    await adapterGenerator(tree, { name: 'azure-devops' });
    expect(readJson(tree, 'packages/adapters-azure-devops/package.json').repository).toEqual({
      type: 'git',
      url: 'git+https://git.example.test/team/core.git',
      directory: 'packages/adapters-azure-devops',
    });
  });

  it('refuses to generate without a root LICENSE, and writes nothing', async () => {
    tree.delete('LICENSE');
    await expect(adapterGenerator(tree, { name: 'jira' })).rejects.toThrow('The workspace has no LICENSE file at its root');
    expect(tree.exists(root)).toBe(false);
  });

  it('refuses to generate when no package names the repository, and writes nothing', async () => {
    writeJson(tree, 'packages/adapters-builtin/package.json', { name: '@ca/adapters-builtin', version: '0.3.0' });
    await expect(adapterGenerator(tree, { name: 'jira' })).rejects.toThrow('No package under packages/ has a "repository" field');
    expect(tree.exists(root)).toBe(false);
  });

  it("scaffolds a ToolSet with one example tool of the adapter's own kind, the create and register functions, and one public door", async () => {
    await adapterGenerator(tree, { name: 'jira' });
    const source = tree.read(`${root}/src/jira-tool-source.ts`, 'utf-8')!;
    expect(source).toContain('export class JiraToolSource extends ToolSet');
    expect(source).toContain("const SOURCE_KIND = 'jira';");
    expect(source).toContain('source: SOURCE_KIND,');
    expect(source).toContain('super({ id, kind: SOURCE_KIND, tools: [new JiraPingTool(id, now)] });');
    expect(source).not.toMatch(/source: 'custom'|kind = 'custom'/);
    expect(source).toContain("name: 'jira.ping'");
    expect(source).toContain('export function createJiraAdapter(settings: JiraAdapterSettings = {}): JiraToolSource');
    expect(source).toContain("export const JIRA_TOOL_NAMES = Object.freeze(['jira.ping'] as const);");
    expect(source).not.toMatch(/<%|%>/);

    const register = tree.read(`${root}/src/register-jira-adapter.ts`, 'utf-8')!;
    expect(register).toContain('export function registerJiraAdapter(container: DependencyContainer, settings: JiraAdapterSettings = {}): JiraToolSource');
    expect(register).toContain('container.register(TOOL_SOURCE, { useValue: source });');

    const index = tree.read(`${root}/src/index.ts`, 'utf-8')!;
    expect(index).toContain("export { registerJiraAdapter } from './register-jira-adapter';");
    expect(index).not.toContain('export *');

    const spec = tree.read(`${root}/src/jira-tool-source.spec.ts`, 'utf-8')!;
    expect(spec).toContain('new ToolRuntime(');
    expect(spec).toContain("runtime.execute('jira.ping'");
  });

  it('scaffolds an error that extends CaError and builds its message from fields: no brand, no isInstance, no message at a throw site', async () => {
    await adapterGenerator(tree, { name: 'jira' });
    const error = tree.read(`${root}/src/jira-adapter-error.ts`, 'utf-8')!;
    expect(error).toContain("import { CaError, describeValue } from '@ca/domain';");
    expect(error).toContain('export class JiraAdapterError extends CaError');
    expect(error).toContain("export type JiraAdapterErrorCode = 'JIRA_INVALID_SETTINGS';");
    expect(error).toContain('super(CODES[options.problem], describeProblem(options));');
    expect(error).not.toMatch(/const BRAND|defineProperty|static isInstance\(|JIRA_TOOL_NOT_FOUND/);
    for (const file of ['jira-tool-source.ts', 'register-jira-adapter.ts']) {
      const text = tree.read(`${root}/src/${file}`, 'utf-8')!;
      expect([file, text]).not.toEqual([file, expect.stringMatching(/message: [`'"]|JIRA_TOOL_NOT_FOUND|function describe\(/)]);
      expect(text).toContain("new JiraAdapterError({ problem: 'invalid-setting'");
    }
    const spec = tree.read(`${root}/src/jira-adapter-error.spec.ts`, 'utf-8')!;
    expect(spec).toContain("Symbol.for('ca.error.JiraAdapterError')");
  });

  it("writes the Install section of the workspace's own packages: the @ca scope mapped in .npmrc, then the install command", async () => {
    await adapterGenerator(tree, { name: 'jira' });
    const generated = sharedInstallText(tree.read(`${root}/README.md`, 'utf-8')!);
    expect(generated).toContain('@ca:registry=https://npm.example.internal/');
    const published = sharedInstallText(fs.readFileSync(path.join(workspaceRoot, 'packages', 'tool-lifecycle', 'README.md'), 'utf8'));
    expect(generated).toBe(published);
  });

  it('writes a README that says how to install, register and extend the adapter', async () => {
    await adapterGenerator(tree, { name: 'jira', description: 'Jira issues and transitions as tools.' });
    const readme = tree.read(`${root}/README.md`, 'utf-8')!;
    expect(readme.startsWith('# @ca/adapters-jira\n\nJira issues and transitions as tools.\n')).toBe(true);
    expect(readme).toContain('npm i @ca/adapters-jira @ca/domain @ca/tool-context @ca/tool-lifecycle @ca/schema tsyringe');
    expect(readme).toContain('registerJiraAdapter(services);');
    expect(readme).toContain('## Adding a tool');
    expect(readme).toContain("have the source kind `'jira'`");
    expect(readme).toContain('`JiraAdapterError` extends `CaError` from `@ca/domain`');
    expect(readme).toContain('| `TOOL_NOT_FOUND` (`ToolNotFoundError` of `@ca/tool-lifecycle`) |');
    expect(readme).not.toContain('JIRA_TOOL_NOT_FOUND');
    expect(readme).not.toMatch(/<%|%>/);
    expect(readJson(tree, `${root}/package.json`).description).toBe('Jira issues and transitions as tools.');
  });

  it('turns a multi-word name into kebab-case files and PascalCase identifiers', async () => {
    await adapterGenerator(tree, { name: 'azure-devops' });
    const source = tree.read('packages/adapters-azure-devops/src/azure-devops-tool-source.ts', 'utf-8')!;
    expect(source).toContain('export class AzureDevopsToolSource');
    expect(source).toContain("name: 'azure-devops.ping'");
    expect(source).toContain("const SOURCE_KIND = 'azure-devops';");
    expect(tree.read('packages/adapters-azure-devops/src/azure-devops-adapter-error.ts', 'utf-8')).toContain("'AZURE_DEVOPS_INVALID_SETTINGS'");
    expect(tree.exists('packages/adapters-azure-devops/src/register-azure-devops-adapter.ts')).toBe(true);
    expect(readJson(tree, 'packages/adapters-azure-devops/package.json').name).toBe('@ca/adapters-azure-devops');
  });

  it('keeps its copy of the source kind rules in step with @ca/domain', () => {
    expect(MAX_SOURCE_KIND_LENGTH).toBe(MAX_TOOL_SOURCE_KIND_LENGTH);
    expect(KNOWN_SOURCE_KINDS).toEqual(KNOWN_TOOL_SOURCE_KINDS);
  });

  it('derives a source kind @ca/domain accepts from every name it takes, up to the longest', () => {
    const longest = `team-${'a'.repeat(MAX_SOURCE_KIND_LENGTH - 'team-'.length)}`;
    for (const name of ['jira', 'azure-devops', 'x', 'adapters-build2', longest]) {
      expect([name, isToolSourceKind(adapterNames(name).fileName)]).toEqual([name, true]);
    }
    expect(adapterNames(longest).fileName).toHaveLength(MAX_SOURCE_KIND_LENGTH);
  });

  it.each([`a${'b'.repeat(MAX_SOURCE_KIND_LENGTH)}`, 'adapters-' + 'c'.repeat(MAX_SOURCE_KIND_LENGTH + 1)])(
    'refuses %j, too long to be a source kind, and writes nothing',
    async (name) => {
      await expect(adapterGenerator(tree, { name })).rejects.toThrow(
        /becomes the source kind of its tools, which may have at most 40\. Choose a shorter name\./,
      );
      expect(tree.listChanges().some((change) => change.path.startsWith('packages/adapters-a') || change.path.startsWith('packages/adapters-c'))).toBe(false);
    },
  );

  it.each(['skill', 'custom', 'adapters-wrapped'])("refuses %j, the kind of one of the workspace's own adapters", async (name) => {
    await expect(adapterGenerator(tree, { name })).rejects.toThrow(
      /is the source kind of one of the workspace's own adapters \(builtin, custom, mcp, skill, wrapped\)/,
    );
  });

  it('accepts the name with its adapters- prefix', () => {
    expect(adapterNames('adapters-jira')).toMatchObject({ fileName: 'jira', packageName: '@ca/adapters-jira' });
  });

  it.each(['Jira', 'jira_cloud', '1jira', 'jira-', '', 'adapters-'])('refuses the name %j with a message saying what a name looks like', async (name) => {
    const before = tree.listChanges().map((change) => change.path);
    await expect(adapterGenerator(tree, { name })).rejects.toThrow(/kebab-case|nothing after "adapters-"/);
    expect(tree.listChanges().map((change) => change.path)).toEqual(before);
  });

  it('refuses to overwrite an existing package', async () => {
    tree.write(`${root}/src/index.ts`, 'export const mine = 1;\n');
    await expect(adapterGenerator(tree, { name: 'jira' })).rejects.toThrow('packages/adapters-jira already exists');
    expect(tree.read(`${root}/src/index.ts`, 'utf-8')).toBe('export const mine = 1;\n');
  });

  it('refuses a name tsconfig.base.json already maps', async () => {
    writeJson(tree, 'tsconfig.base.json', { compilerOptions: { paths: { '@ca/adapters-jira': ['./elsewhere/index.ts'] } } });
    await expect(adapterGenerator(tree, { name: 'jira' })).rejects.toThrow('tsconfig.base.json already maps @ca/adapters-jira');
    expect(tree.exists(root)).toBe(false);
  });
});
