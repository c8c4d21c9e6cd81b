import { readJson, writeJson, type Tree } from '@nx/devkit';
import { createTreeWithEmptyWorkspace } from '@nx/devkit/testing';
import { adapterGenerator, adapterNames } from './generator';

const root = 'packages/adapters-jira';

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
        'README.md',
        'jest.config.js',
        'package.json',
        'project.json',
        'src/index.spec.ts',
        'src/index.ts',
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
      type: 'commonjs',
      main: './dist/index.js',
      types: './dist/index.d.ts',
      exports: {
        '.': { types: './dist/index.d.ts', default: './dist/index.js' },
        './package.json': './package.json',
      },
      files: ['dist', '!dist/**/*.spec.*', '!dist/**/__fixtures__', 'README.md'],
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

  it('maps the new package in tsconfig.base.json and keeps the existing paths', async () => {
    await adapterGenerator(tree, { name: 'jira' });
    expect(readJson(tree, 'tsconfig.base.json').compilerOptions.paths).toEqual({
      '@ca/domain': ['./packages/domain/src/index.ts'],
      '@ca/adapters-jira': ['./packages/adapters-jira/src/index.ts'],
    });
  });

  it('scaffolds a ToolSource with one example tool, the create and register functions, and one public door', async () => {
    await adapterGenerator(tree, { name: 'jira' });
    const source = tree.read(`${root}/src/jira-tool-source.ts`, 'utf-8')!;
    expect(source).toContain('export class JiraToolSource implements ToolSource');
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

  it('writes a README that says how to install, register and extend the adapter', async () => {
    await adapterGenerator(tree, { name: 'jira', description: 'Jira issues and transitions as tools.' });
    const readme = tree.read(`${root}/README.md`, 'utf-8')!;
    expect(readme.startsWith('# @ca/adapters-jira\n\nJira issues and transitions as tools.\n')).toBe(true);
    expect(readme).toContain('npm i @ca/adapters-jira @ca/domain @ca/tool-context @ca/tool-lifecycle @ca/schema tsyringe');
    expect(readme).toContain('registerJiraAdapter(services);');
    expect(readme).toContain('## Adding a tool');
    expect(readme).not.toMatch(/<%|%>/);
    expect(readJson(tree, `${root}/package.json`).description).toBe('Jira issues and transitions as tools.');
  });

  it('turns a multi-word name into kebab-case files and PascalCase identifiers', async () => {
    await adapterGenerator(tree, { name: 'azure-devops' });
    const source = tree.read('packages/adapters-azure-devops/src/azure-devops-tool-source.ts', 'utf-8')!;
    expect(source).toContain('export class AzureDevopsToolSource');
    expect(source).toContain("name: 'azure-devops.ping'");
    expect(source).toContain("'AZURE_DEVOPS_INVALID_SETTINGS'");
    expect(tree.exists('packages/adapters-azure-devops/src/register-azure-devops-adapter.ts')).toBe(true);
    expect(readJson(tree, 'packages/adapters-azure-devops/package.json').name).toBe('@ca/adapters-azure-devops');
  });

  it('accepts the name with its adapters- prefix', () => {
    expect(adapterNames('adapters-jira')).toMatchObject({ fileName: 'jira', packageName: '@ca/adapters-jira' });
  });

  it.each(['Jira', 'jira_cloud', '1jira', 'jira-', '', 'adapters-'])('refuses the name %j with a message saying what a name looks like', async (name) => {
    await expect(adapterGenerator(tree, { name })).rejects.toThrow(/kebab-case|nothing after "adapters-"/);
    expect(tree.listChanges().filter((change) => change.path.startsWith('packages/'))).toEqual([]);
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
