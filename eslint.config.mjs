import nx from '@nx/eslint-plugin';

// Layering of shared/DESIGN.md section 1, enforced: a project may import only
// from the layers below it, and an adapter never imports another adapter.
// `layer:sandbox` (@ca/sandbox: the process runner and the kernel sandbox)
// sits beside the runtime, below the adapters: it uses the context, nothing of
// the runtime. The runtime may import it only for the deprecated re-exports of
// its old subpaths (src/deprecated/, see the rule below).
const layers = {
  'layer:domain': [],
  'layer:schema': ['layer:domain'],
  'layer:context': ['layer:domain', 'layer:schema'],
  'layer:sandbox': ['layer:domain', 'layer:context'],
  'layer:lifecycle': ['layer:domain', 'layer:schema', 'layer:context', 'layer:sandbox'],
  'layer:adapter': ['layer:domain', 'layer:schema', 'layer:context', 'layer:sandbox', 'layer:lifecycle'],
  // The front door (@ca/model-tools, @ca/mcp-server): above the lifecycle, beside the adapters, importing none of them.
  // One front door may build on another (the MCP server on the model formats); a cycle between them is an error of its own.
  'layer:front-door': ['layer:domain', 'layer:schema', 'layer:context', 'layer:lifecycle', 'layer:front-door'],
  'layer:app': ['layer:domain', 'layer:schema', 'layer:context', 'layer:sandbox', 'layer:lifecycle', 'layer:adapter', 'layer:front-door'],
  'layer:tooling': [
    'layer:domain',
    'layer:schema',
    'layer:context',
    'layer:sandbox',
    'layer:lifecycle',
    'layer:adapter',
    'layer:front-door',
    'layer:app',
    'layer:tooling',
  ],
};

export default [
  { ignores: ['**/dist', '**/node_modules', '**/.nx', '**/coverage', '**/__fixtures__/**', '**/files/**', 'tmp/**'] },
  ...nx.configs['flat/base'],
  ...nx.configs['flat/typescript'],
  ...nx.configs['flat/javascript'],
  {
    files: ['**/*.ts', '**/*.js', '**/*.mjs', '**/*.cjs'],
    rules: {
      '@nx/enforce-module-boundaries': [
        'error',
        {
          enforceBuildableLibDependency: false,
          allow: [],
          depConstraints: [
            ...Object.entries(layers).map(([sourceTag, below]) => ({
              sourceTag,
              onlyDependOnLibsWithTags: sourceTag === 'layer:tooling' ? below : below.length ? below : ['layer:none'],
            })),
            {
              sourceTag: 'layer:domain',
              bannedExternalImports: ['tsyringe', 'reflect-metadata', 'ajv', 'ajv-formats', '@opentelemetry/*'],
            },
          ],
        },
      ],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    // The runtime starts no program: only the deprecated re-exports of its old subpaths reach @ca/sandbox.
    files: ['packages/tool-lifecycle/src/**/*.ts'],
    ignores: ['packages/tool-lifecycle/src/deprecated/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ group: ['@ca/sandbox', '@ca/sandbox/*'], message: 'The runtime does not start programs; @ca/sandbox is for the adapters that do.' }] },
      ],
    },
  },
  {
    files: ['**/*.spec.ts', '**/testing/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off', '@typescript-eslint/no-non-null-assertion': 'off' },
  },
  {
    // Configuration files and plain scripts are not part of any layer.
    files: ['**/*.js', '**/*.cjs', '**/*.mjs'],
    rules: { '@typescript-eslint/no-require-imports': 'off', '@nx/enforce-module-boundaries': 'off' },
  },
];
