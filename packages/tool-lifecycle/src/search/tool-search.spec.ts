import { normalizeCapability, type ToolCapabilityInput } from '@ca/domain';
import { createExecutionContext } from '@ca/tool-context';
import { ToolInvalidArgumentError } from '../errors';
import type { ToolDescriptor } from '../tool';
import { ToolSearchError } from './tool-search-error';
import { ToolSearchIndex, summaryOf, type ToolSearchReranker } from './tool-search';

function tool(
  name: string,
  description: string,
  extra: Partial<Omit<ToolDescriptor, 'capability'>> & { capability?: ToolCapabilityInput } = {},
): ToolDescriptor {
  const source =
    extra.source ?? (name.split('.')[0] === 'mcp' ? 'mcp' : name.startsWith('skill.') ? 'skill' : name.startsWith('builtin.') ? 'builtin' : 'custom');
  return { ...extra, name, description, source, capability: normalizeCapability(extra.capability ?? { writes: false }) } as ToolDescriptor;
}

const catalog: ToolDescriptor[] = [
  tool('mcp.filesystem.read_text_file', 'Read the complete contents of a file from the file system as text.', {
    inputSchema: { type: 'object', properties: { path: { type: 'string', description: 'Where the file is' } } },
  }),
  tool('mcp.filesystem.write_file', 'Create a new file or completely overwrite an existing file with new content.', {
    capability: { writes: true, destructive: true },
    inputSchema: { type: 'object', properties: { path: { type: 'string' }, content: { type: 'string' } } },
  }),
  tool('mcp.weather.get_forecast', 'Returns the forecast for a city.', {
    capability: { writes: false, openWorld: true },
    inputSchema: { type: 'object', properties: { city: { type: 'string', description: 'Name of the city' } } },
  }),
  tool('builtin.fs.delete', 'Delete a file or a folder inside a bound resource.', { capability: { writes: true, checkpointable: true, destructive: true } }),
  tool('skill.release-notes', 'Write release notes from the merged pull requests of a milestone.'),
  tool('billing.createInvoice', 'Issue a bill to a customer.', {
    inputSchema: {
      type: 'object',
      properties: {
        customer: {
          type: 'object',
          description: 'Who pays',
          properties: { vatNumber: { type: 'string', description: 'Tax identification of the company' } },
        },
        lines: { type: 'array', items: { type: 'object', properties: { sku: { type: 'string', description: 'Stock keeping unit' } } } },
        currency: { type: 'string', enum: ['EUR', 'USD', 'JPY'] },
      },
    },
  }),
];

async function names(index: ToolSearchIndex, query: string, options: Parameters<ToolSearchIndex['search']>[1] = {}): Promise<string[]> {
  return (await index.search(query, options)).map((hit) => hit.name);
}

describe('ToolSearchIndex, words (bm25)', () => {
  const index = new ToolSearchIndex();
  beforeAll(() => index.update(catalog));

  it('finds a tool by the words of its name, split at dots, underscores and camelCase, in any inflection', async () => {
    expect((await names(index, 'reading text files'))[0]).toBe('mcp.filesystem.read_text_file');
    expect((await names(index, 'create an invoice'))[0]).toBe('billing.createInvoice');
  });

  it('finds a tool by its description, its arguments (nested ones and enum values too) and its server', async () => {
    expect((await names(index, 'merged pull requests'))[0]).toBe('skill.release-notes');
    expect((await names(index, 'VAT number of the company'))[0]).toBe('billing.createInvoice');
    expect((await names(index, 'stock keeping unit'))[0]).toBe('billing.createInvoice');
    expect((await names(index, 'JPY'))[0]).toBe('billing.createInvoice');
    expect(await names(index, 'filesystem', { k: 5 })).toEqual(['mcp.filesystem.read_text_file', 'mcp.filesystem.write_file']);
  });

  it('finds a tool through a related word at a lower score than through the word itself', async () => {
    const [related] = await index.search('remove the folder');
    const [direct] = await index.search('delete the folder');
    expect(related?.name).toBe('builtin.fs.delete');
    expect(direct?.name).toBe('builtin.fs.delete');
    expect(related!.score).toBeLessThan(direct!.score);
  });

  it('returns name, one-line description, source and score, and the schemas only on request', async () => {
    const [hit] = await index.search('weather forecast', { k: 1 });
    expect(hit).toEqual({ name: 'mcp.weather.get_forecast', description: 'Returns the forecast for a city.', source: 'mcp', score: expect.any(Number) });
    const [withSchemas] = await index.search('weather forecast', { k: 1, schemas: true });
    expect(withSchemas?.inputSchema).toEqual(catalog[2]!.inputSchema);
  });

  it('returns at most k tools, best first, and nothing for words no tool has (or only stop words)', async () => {
    const hits = await index.search('file', { k: 2 });
    expect(hits).toHaveLength(2);
    expect(hits[0]!.score).toBeGreaterThanOrEqual(hits[1]!.score);
    expect(await index.search('zebra quantum')).toEqual([]);
    expect(await index.search('what is the')).toEqual([]);
    expect(await index.search('')).toEqual([]);
  });

  it('filters by source kind and by capability', async () => {
    expect(await names(index, 'file folder', { sources: ['builtin'] })).toEqual(['builtin.fs.delete']);
    expect(await names(index, 'file folder', { capability: { writes: false } })).toEqual(['mcp.filesystem.read_text_file']);
    expect(await names(index, 'file folder', { capability: { writes: true, checkpointable: true } })).toEqual(['builtin.fs.delete']);
  });

  it('with a plan, finds only the tools its policy lets run (the runtime’s policyRefusal)', async () => {
    const readOnly = createExecutionContext({ planId: 'p-read', policy: { readOnly: true } });
    expect(await names(index, 'file folder', { ctx: readOnly })).toEqual(['mcp.filesystem.read_text_file']);
    const offline = createExecutionContext({ planId: 'p-offline', policy: { network: 'deny' } });
    expect(await names(index, 'weather forecast city', { ctx: offline })).toEqual([]);
    const checkpoints = createExecutionContext({ planId: 'p-check', policy: { requireCheckpoint: true } });
    expect(await names(index, 'delete a file', { ctx: checkpoints })).toContain('builtin.fs.delete');
    expect(await names(index, 'delete a file', { ctx: checkpoints })).not.toContain('mcp.filesystem.write_file');
  });

  it('with a plan, filters a sandboxed tool by its capability in that plan, as the runtime reads it', async () => {
    const sandboxed = new ToolSearchIndex();
    sandboxed.update([
      tool('builtin.command.run', 'Run a program with arguments in a sandbox.', {
        capability: { writes: true, destructive: true, checkpointable: false },
        sandboxed: { overlay: true },
      }),
    ]);
    const readOnly = createExecutionContext({ planId: 'p-read-sandboxed', policy: { readOnly: true } });
    const plain = createExecutionContext({ planId: 'p-plain-sandboxed' });
    expect(await names(sandboxed, 'run a program', { capability: { writes: false } })).toEqual([]);
    expect(await names(sandboxed, 'run a program', { ctx: readOnly, capability: { writes: false } })).toEqual(['builtin.command.run']);
    expect(await names(sandboxed, 'run a program', { ctx: plain, capability: { destructive: true } })).toEqual(['builtin.command.run']);
    expect(await names(sandboxed, 'run a program', { ctx: plain, capability: { writes: false } })).toEqual([]);
  });
});

describe('ToolSearchIndex, regex', () => {
  const index = new ToolSearchIndex();
  beforeAll(() => index.update(catalog));

  it('ranks name matches over description matches over argument matches, each in name order, ignoring case', async () => {
    const hits = await index.search('file', { mode: 'regex', k: 10 });
    expect(hits.map((hit) => [hit.name, hit.score])).toEqual([
      ['mcp.filesystem.read_text_file', 3],
      ['mcp.filesystem.write_file', 3],
      ['builtin.fs.delete', 2],
    ]);
    expect(await names(index, 'VATNUMBER', { mode: 'regex' })).toEqual(['billing.createInvoice']);
    expect(await names(index, '^mcp\\.[a-z]+\\.(read|write)_', { mode: 'regex' })).toEqual(['mcp.filesystem.read_text_file', 'mcp.filesystem.write_file']);
  });

  it('applies the same filters', async () => {
    expect(await names(index, 'file', { mode: 'regex', capability: { writes: true } })).toEqual(['mcp.filesystem.write_file', 'builtin.fs.delete']);
  });

  it('refuses a pattern the linear-time engine cannot run, or a very long one, with the reason', async () => {
    await expect(index.search('(?=file)', { mode: 'regex' })).rejects.toThrow(/RE2 syntax[\s\S]*lookahead/);
    await expect(index.search('(', { mode: 'regex' })).rejects.toBeInstanceOf(ToolInvalidArgumentError);
    await expect(index.search('a'.repeat(1_001), { mode: 'regex' })).rejects.toThrow(/at most 1000 characters/);
  });

  it('runs a catastrophic pattern over a long description to the end (no backtracking)', async () => {
    const hostile = new ToolSearchIndex();
    hostile.update([tool('custom.long', `${'a'.repeat(5_000)}!`), tool('custom.short', 'aaab')]);
    // On a backtracking engine, (a+)+$ against 5,000 a's and a '!' would not finish.
    expect(await names(hostile, '(a+)+$', { mode: 'regex' })).toEqual([]);
    expect(await names(hostile, '(a|aa)+b', { mode: 'regex' })).toEqual(['custom.short']);
  });
});

describe('ToolSearchIndex, hostile and large input', () => {
  it('reads a description of megabytes only up to its limit, and a query of megabytes only up to its', async () => {
    const index = new ToolSearchIndex();
    const description = `${'padding '.repeat(250_000)} needle`;
    index.update([tool('custom.huge', description), tool('custom.other', 'another tool with a needle')]);
    expect(await names(index, 'needle')).toEqual(['custom.other']);
    const query = `${'needle '.repeat(1_000_000)}`;
    expect(await names(index, query)).toEqual(['custom.other']);
  });

  it('ranks 10,000 tools that share one word, and breaks ties by name', async () => {
    const index = new ToolSearchIndex();
    const many = Array.from({ length: 10_000 }, (_, n) => tool(`custom.tool${String(n).padStart(5, '0')}`, 'Shared word.'));
    index.update([...many, tool('custom.special', 'Shared word with more: special.')]);
    expect(await names(index, 'shared special', { k: 3 })).toEqual(['custom.special', 'custom.tool00000', 'custom.tool00001']);
    expect(await index.search('shared', { k: 100 })).toHaveLength(100);
  });

  it('indexes a schema that throws when read as far as it could be read, and one of 10,000 properties within its limit', async () => {
    const index = new ToolSearchIndex();
    const trap = { type: 'object', properties: { first: { description: 'reachable' } } };
    Object.defineProperty(trap.properties, 'second', { enumerable: true, get: () => ({ description: 'never' }) });
    Object.defineProperty(trap, 'items', {
      enumerable: true,
      get: () => {
        throw new Error('hostile getter');
      },
    });
    // A word of letters per property: zq + its number's digits as the letters a–j.
    const word = (n: number): string => `zq${String(n).replace(/\d/g, (digit) => String.fromCharCode(97 + Number(digit)))}`;
    const wide = {
      type: 'object',
      properties: Object.fromEntries(Array.from({ length: 10_000 }, (_, n) => [`p${n}`, { description: `argument ${word(n)}` }])),
    };
    index.update([tool('custom.trap', 'A trap.', { inputSchema: trap }), tool('custom.wide', 'Wide.', { inputSchema: wide })]);
    expect(await names(index, 'reachable')).toEqual(['custom.trap']);
    expect(await names(index, word(50))).toEqual(['custom.wide']);
    expect(await names(index, word(5_000))).toEqual([]);
  });
});

describe('ToolSearchIndex.update', () => {
  it('holds exactly the tools of the last update, re-reading only those whose text changed', async () => {
    let reads = 0;
    const counted = (description: string): ToolDescriptor => {
      const schema = {};
      Object.defineProperty(schema, 'properties', {
        enumerable: true,
        get: () => {
          reads++;
          return { place: { description } };
        },
      });
      return tool('custom.counted', 'A counted tool.', { inputSchema: schema });
    };
    const index = new ToolSearchIndex();
    const first = counted('harbour');
    index.update([first, tool('custom.gone', 'Soon removed.')]);
    expect(reads).toBe(1);
    index.update([{ ...first }]);
    expect(reads).toBe(1);
    expect(index.size).toBe(1);
    expect(await names(index, 'removed')).toEqual([]);
    expect(await names(index, 'harbour')).toEqual(['custom.counted']);
    index.update([counted('lighthouse')]);
    expect(reads).toBe(2);
    expect(await names(index, 'harbour')).toEqual([]);
    expect(await names(index, 'lighthouse')).toEqual(['custom.counted']);
  });

  it('refuses what is not a list of descriptors', () => {
    const index = new ToolSearchIndex();
    expect(() => index.update('tools' as never)).toThrow(ToolInvalidArgumentError);
    expect(() => index.update([{ description: 'no name' } as never])).toThrow(/tools\[0\]/);
  });
});

describe('ToolSearchIndex, reranker', () => {
  it('reorders the lexical candidates by the scores it returns, and hands over only tools that pass the filters', async () => {
    const seen: string[][] = [];
    const reranker: ToolSearchReranker = {
      candidates: 10,
      rerank: ({ candidates }) => {
        seen.push(candidates.map((candidate) => candidate.descriptor.name));
        return candidates.map((candidate) => (candidate.descriptor.name === 'builtin.fs.delete' ? 100 : candidate.score));
      },
    };
    const index = new ToolSearchIndex({ reranker });
    index.update(catalog);
    const hits = await index.search('read a file', { k: 2, capability: { destructive: false } });
    expect(seen[0]).toEqual(['mcp.filesystem.read_text_file']);
    expect(hits.map((hit) => hit.name)).toEqual(['mcp.filesystem.read_text_file']);
    expect((await index.search('read a file', { k: 2 })).map((hit) => hit.name)).toEqual(['builtin.fs.delete', 'mcp.filesystem.read_text_file']);
  });

  it("with candidates: 'all', also hands over the tools the words did not find, with score 0", async () => {
    const index = new ToolSearchIndex({
      reranker: { candidates: 'all', rerank: ({ candidates }) => candidates.map((candidate) => (candidate.descriptor.name === 'skill.release-notes' ? 1 : 0)) },
    });
    index.update(catalog);
    expect((await index.search('bill the client', { k: 1 }))[0]?.name).toBe('skill.release-notes');
  });

  it('reports a reranker that throws or answers badly as ToolSearchError, and passes the cancellation on', async () => {
    const throwing = new ToolSearchIndex({ reranker: { rerank: () => Promise.reject(new Error('model offline')) } });
    throwing.update(catalog);
    const error = await throwing.search('file').catch((caught: unknown) => caught);
    expect(ToolSearchError.isInstance(error)).toBe(true);
    expect((error as ToolSearchError).code).toBe('TOOL_SEARCH_FAILED');
    expect((error as Error).cause).toEqual(new Error('model offline'));
    const wrong = new ToolSearchIndex({ reranker: { rerank: () => [Number.NaN] } });
    wrong.update(catalog);
    await expect(wrong.search('file')).rejects.toThrow(/one finite number per candidate/);
    const controller = new AbortController();
    const slow = new ToolSearchIndex({
      reranker: { rerank: ({ signal }) => new Promise((_, reject) => signal?.addEventListener('abort', () => reject(new Error('stopped')))) },
    });
    slow.update(catalog);
    const pending = slow.search('file', { signal: controller.signal });
    controller.abort(new Error('caller gave up'));
    await expect(pending).rejects.toThrow('caller gave up');
  });

  it('refuses a reranker without rerank, or with a bad number of candidates', () => {
    expect(() => new ToolSearchIndex({ reranker: {} as never })).toThrow(ToolInvalidArgumentError);
    expect(() => new ToolSearchIndex({ reranker: { candidates: 0, rerank: () => [] } })).toThrow(/reranker.candidates/);
  });
});

describe('ToolSearchIndex, options', () => {
  const index = new ToolSearchIndex();
  beforeAll(() => index.update(catalog));

  it.each([
    ['a query that is not a string', 42, {}, /query must be a string/],
    ['k of 0', 'file', { k: 0 }, /k must be a whole number from 1 to 100/],
    ['k above 100', 'file', { k: 101 }, /k must be/],
    ['an unknown mode', 'file', { mode: 'semantic' }, /mode must be 'bm25' or 'regex'/],
    ['sources as a string', 'file', { sources: 'mcp' }, /sources must be an array of source kinds/],
    ['an unknown capability', 'file', { capability: { flies: true } }, /capability.flies must be one of writes/],
    ['a capability that is not a boolean', 'file', { capability: { writes: 'no' } }, /capability.writes must be true or false/],
    ['a ctx that is not a plan', 'file', { ctx: { planId: 'p' } }, /ctx must be the context of a plan/],
    ['schemas that is not a boolean', 'file', { schemas: 1 }, /schemas must be true or false/],
  ])('refuses %s', async (_, query, options, message) => {
    const error = await index.search(query as never, options as never).catch((caught: unknown) => caught);
    expect(ToolInvalidArgumentError.isInstance(error)).toBe(true);
    expect((error as Error).message).toMatch(message);
  });
});

describe('summaryOf', () => {
  it('keeps the first sentence on one line, at most 200 characters', () => {
    expect(summaryOf('Reads a file.\nIt returns its text. More.')).toBe('Reads a file.');
    expect(summaryOf('  Returns  the\n sum of two numbers  ')).toBe('Returns the sum of two numbers');
    expect(summaryOf('version 1.2 of the API. Second.')).toBe('version 1.2 of the API.');
    const long = summaryOf('word '.repeat(100));
    expect(long.length).toBeLessThanOrEqual(200);
    expect(long.endsWith('…')).toBe(true);
  });
});
