// Shared Jest settings. Tests import sibling packages from their sources
// (not their dist/), so `nx test` never needs a build first; the mapping
// mirrors the `paths` of tsconfig.base.json.
const path = require('node:path');

const packagesDir = path.join(__dirname, 'packages');

module.exports = {
  testEnvironment: 'node',
  testMatch: ['<rootDir>/src/**/*.spec.ts'],
  moduleFileExtensions: ['ts', 'js', 'json'],
  transform: {
    '^.+\\.ts$': ['ts-jest', { tsconfig: '<rootDir>/tsconfig.json' }],
  },
  moduleNameMapper: {
    '^@ca/tool-lifecycle/testing$': `${packagesDir}/tool-lifecycle/src/testing/index.ts`,
    '^@ca/tool-lifecycle/process$': `${packagesDir}/tool-lifecycle/src/deprecated/process.ts`,
    '^@ca/tool-lifecycle/sandbox$': `${packagesDir}/tool-lifecycle/src/deprecated/sandbox.ts`,
    '^@ca/sandbox/testing$': `${packagesDir}/sandbox/src/testing/index.ts`,
    '^@ca/plan-registry-redis/testing$': `${packagesDir}/plan-registry-redis/src/testing/index.ts`,
    '^@ca/model-tools/(ai-sdk|openai-agents|langchain)$': `${packagesDir}/model-tools/src/$1/index.ts`,
    '^@ca/([a-z-]+)$': `${packagesDir}/$1/src/index.ts`,
  },
  clearMocks: true,
};
