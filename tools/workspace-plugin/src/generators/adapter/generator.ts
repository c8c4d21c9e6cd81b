import * as path from 'node:path';
import { generateFiles, logger, names, readJson, updateJson, writeJson, type GeneratorCallback, type Tree } from '@nx/devkit';
import type { AdapterGeneratorSchema } from './schema';

/** What an adapter's name becomes in paths, identifiers and the package name. */
export interface AdapterNames {
  /** `jira` — kebab-case, used in file names and as the tools' namespace. */
  readonly fileName: string;
  /** `Jira` — in `JiraToolSource`, `registerJiraAdapter`, `JiraAdapterSettings`. */
  readonly className: string;
  /** `JIRA` — in `JIRA_TOOL_NAMES` and the error codes (`JIRA_INVALID_SETTINGS`). */
  readonly constantName: string;
  /** `@ca/adapters-jira` — the npm package and the Nx project. */
  readonly packageName: string;
  /** `packages/adapters-jira`. */
  readonly projectRoot: string;
  /** `jira.ping` — the example tool. */
  readonly exampleToolName: string;
}

const NAME_PATTERN = /^[a-z][a-z0-9]*(-[a-z0-9]+)*$/;

/** The core packages every adapter builds on; adapters take them as peers so a service holds one copy. */
const CORE_PEERS = ['@ca/domain', '@ca/tool-context', '@ca/tool-lifecycle'] as const;
const FALLBACK_CORE_RANGE = '^0.1.0';
const FALLBACK_TSYRINGE_RANGE = '^4.10.0';

/**
 * The names derived from an adapter's kebab-case name.
 * @throws Error when `name` is not kebab-case (`jira`, `azure-devops`).
 */
export function adapterNames(name: string): AdapterNames {
  const given = typeof name === 'string' ? name.trim() : name;
  if (typeof given !== 'string' || !NAME_PATTERN.test(given)) {
    throw new Error(
      `The adapter name must be kebab-case — lower-case letters and digits, words joined by "-", starting with a letter (e.g. "jira" or "azure-devops"); got ${JSON.stringify(name)}.`,
    );
  }
  const fileName = given.startsWith('adapters-') ? given.slice('adapters-'.length) : given;
  if (fileName.length === 0 || !NAME_PATTERN.test(fileName)) {
    throw new Error(`The adapter name ${JSON.stringify(name)} leaves nothing after "adapters-"; pass only the adapter's own name, e.g. "jira".`);
  }
  return {
    fileName,
    className: names(fileName).className,
    constantName: names(fileName).constantName,
    packageName: `@ca/adapters-${fileName}`,
    projectRoot: `packages/adapters-${fileName}`,
    exampleToolName: `${fileName}.ping`,
  };
}

/**
 * Scaffolds `packages/adapters-<name>`: a publishable `@ca/adapters-<name>`
 * package in the shape of the other adapters — a `ToolSource` with one
 * example tool, `create<Name>Adapter` and `register<Name>Adapter`, tags, peer
 * dependencies on the core packages, release settings, tests and a README —
 * and maps the package in `tsconfig.base.json`.
 *
 * @throws Error when the name is not kebab-case, or the folder, the project
 *   name or the tsconfig path already exists.
 */
export async function adapterGenerator(tree: Tree, schema: AdapterGeneratorSchema): Promise<GeneratorCallback> {
  const adapter = adapterNames(schema.name);
  const { projectRoot, packageName } = adapter;
  if (tree.exists(projectRoot)) {
    throw new Error(`${projectRoot} already exists. Choose another adapter name, or remove the folder first.`);
  }
  const basePaths = tree.exists('tsconfig.base.json')
    ? (readJson<{ compilerOptions?: { paths?: Record<string, string[]> } }>(tree, 'tsconfig.base.json').compilerOptions?.paths ?? {})
    : {};
  if (packageName in basePaths) {
    throw new Error(`tsconfig.base.json already maps ${packageName} (to ${JSON.stringify(basePaths[packageName])}). Remove the stale entry, or choose another adapter name.`);
  }

  const description = schema.description?.trim() || `${adapter.className} tools as a tool source.`;
  const coreRanges = Object.fromEntries(CORE_PEERS.map((peer) => [peer, currentRange(tree, peer)]));

  writeJson(tree, `${projectRoot}/package.json`, {
    name: packageName,
    version: '0.1.0',
    description,
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
    peerDependencies: { ...coreRanges, tsyringe: tsyringeRange(tree) },
  });

  writeJson(tree, `${projectRoot}/project.json`, {
    $schema: '../../node_modules/nx/schemas/project-schema.json',
    name: packageName,
    sourceRoot: `${projectRoot}/src`,
    projectType: 'library',
    tags: ['layer:adapter', 'scope:adapter', 'npm:public'],
    targets: { build: {}, typecheck: {}, lint: {}, test: {} },
  });

  writeJson(tree, `${projectRoot}/tsconfig.json`, {
    extends: '../../tsconfig.base.json',
    compilerOptions: { types: ['node', 'jest'], noEmit: true },
    include: ['src/**/*.ts'],
  });

  writeJson(tree, `${projectRoot}/tsconfig.lib.json`, {
    extends: '../../tsconfig.base.json',
    compilerOptions: { rootDir: 'src', outDir: 'dist', paths: {}, types: ['node'] },
    include: ['src/**/*.ts'],
    exclude: ['src/**/*.spec.ts', 'src/**/__fixtures__/**', 'src/**/*.test-helper.ts'],
  });

  generateFiles(tree, path.join(__dirname, 'files'), projectRoot, {
    ...adapter,
    description,
    peerInstall: [...CORE_PEERS, '@ca/schema', 'tsyringe'].join(' '),
  });

  if (tree.exists('tsconfig.base.json')) {
    updateJson(tree, 'tsconfig.base.json', (tsconfig) => {
      tsconfig.compilerOptions ??= {};
      tsconfig.compilerOptions.paths ??= {};
      tsconfig.compilerOptions.paths[packageName] = [`./${projectRoot}/src/index.ts`];
      return tsconfig;
    });
  }

  return () => {
    logger.info(
      [
        `Created ${packageName} in ${projectRoot}.`,
        'Next:',
        `  1. npm install                      (links the new workspace package and records it in package-lock.json)`,
        `  2. npx nx run-many -t build lint typecheck test -p ${packageName}`,
        `  3. replace the example tool ${adapter.exampleToolName} with real ones (see ${projectRoot}/README.md)`,
        '  4. commit with a conventional message, e.g. "feat(adapters-' + adapter.fileName + '): first tools" — nx release picks the package up (tag npm:public).',
      ].join('\n'),
    );
  };
}

/** `^<version>` of a workspace package as it is now, so a new adapter peers on what the workspace ships. */
function currentRange(tree: Tree, packageName: string): string {
  const manifestPath = `packages/${packageName.replace(/^@ca\//, '')}/package.json`;
  if (!tree.exists(manifestPath)) return FALLBACK_CORE_RANGE;
  const version = readJson<{ version?: unknown }>(tree, manifestPath).version;
  return typeof version === 'string' && /^\d+\.\d+\.\d+/.test(version) ? `^${version}` : FALLBACK_CORE_RANGE;
}

/** The tsyringe range the core runtime uses, so adapters and core agree on one copy. */
function tsyringeRange(tree: Tree): string {
  const manifestPath = 'packages/tool-lifecycle/package.json';
  if (!tree.exists(manifestPath)) return FALLBACK_TSYRINGE_RANGE;
  const manifest = readJson<{ dependencies?: Record<string, string>; peerDependencies?: Record<string, string> }>(tree, manifestPath);
  return manifest.peerDependencies?.['tsyringe'] ?? manifest.dependencies?.['tsyringe'] ?? FALLBACK_TSYRINGE_RANGE;
}

export default adapterGenerator;
