import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import ts from 'typescript';
import * as modelTools from './index';

/** Every module the file reaches through relative imports, and every package it names. */
function importGraph(entry: string): { files: Set<string>; packages: Set<string> } {
  const files = new Set<string>();
  const packages = new Set<string>();
  const visit = (file: string): void => {
    if (files.has(file)) return;
    files.add(file);
    for (const imported of ts.preProcessFile(readFileSync(file, 'utf8'), true, true).importedFiles) {
      if (imported.fileName.startsWith('.')) visit(resolve(dirname(file), `${imported.fileName}.ts`).replace(/\.ts\.ts$/, '.ts'));
      else packages.add(imported.fileName);
    }
  };
  visit(entry);
  return { files, packages };
}

describe('@ca/model-tools public API', () => {
  it('exports exactly the documented runtime names', () => {
    expect(Object.keys(modelTools).sort()).toEqual([
      'DeferredTools',
      'FrameworkApprovals',
      'MODEL_TOOL_FORMATS',
      'ModelTools',
      'ModelToolsError',
      'NATIVE_DEFERRED_FORMATS',
      'OPENAI_AGENTS_NAME_RULES',
      'REPAIR_RULES',
      'ToolNameMap',
      'modelErrorText',
      'nameRulesOf',
      'repairArguments',
      'toGeminiSchema',
      'toOpenAiStrictSchema',
    ]);
  });

  it('each framework subpath exports exactly its documented names', async () => {
    expect(Object.keys(await import('./ai-sdk/index')).sort()).toEqual(['ModelToolCallError', 'createAiSdkTools']);
    expect(Object.keys(await import('./openai-agents/index')).sort()).toEqual(['createOpenAiAgentsTools']);
    expect(Object.keys(await import('./langchain/index')).sort()).toEqual(['createLangChainApprovalMiddleware', 'createLangChainTools']);
    const manifest = JSON.parse(readFileSync(join(__dirname, '..', 'package.json'), 'utf8')) as { exports: Record<string, unknown> };
    expect(Object.keys(manifest.exports).sort()).toEqual(['.', './ai-sdk', './langchain', './openai-agents', './package.json']);
  });

  it('the main entry reaches no agent framework: each is on its own subpath', () => {
    const main = importGraph(join(__dirname, 'index.ts'));
    expect([...main.packages].filter((name) => /^(ai|@openai\/|@langchain\/|langchain|zod)/.test(name))).toEqual([]);
    expect([...importGraph(join(__dirname, 'ai-sdk', 'index.ts')).files].some((file) => file.includes('/openai-agents/') || file.includes('/langchain/'))).toBe(
      false,
    );
    expect(importGraph(join(__dirname, 'openai-agents', 'index.ts')).packages).toContain('@openai/agents');
    expect(importGraph(join(__dirname, 'langchain', 'index.ts')).packages).toContain('@langchain/core/tools');
  });
});
