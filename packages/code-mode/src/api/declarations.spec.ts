import { declareTool, typeOf } from './declarations';
import { ToolNames, identifierOf } from './tool-names';

describe('tool names as identifiers', () => {
  it('maps names to identifiers and back, collisions included, the same way for the same catalog', () => {
    const names = new ToolNames(['fs.read_file', 'fs/read-file', '1password.get', 'constructor', 'a.b']);
    expect(names.identOf('fs.read_file')).toBe('fs_read_file');
    expect(names.identOf('fs/read-file')).toBe('fs_read_file_2');
    expect(names.identOf('1password.get')).toBe('_1password_get');
    expect(names.identOf('constructor')).toBe('constructor_2');
    for (const name of ['fs.read_file', 'fs/read-file', '1password.get', 'constructor', 'a.b']) expect(names.nameOf(names.identOf(name) as string)).toBe(name);
    expect(new ToolNames(['fs/read-file', 'fs.read_file']).identOf('fs/read-file')).toBe('fs_read_file_2');
    expect(identifierOf('...')).toBe('_tool');
  });
});

describe('declarations', () => {
  it('writes a tool in one line: first sentence, compact input and output types', () => {
    const line = declareTool('issues_create', {
      name: 'issues.create',
      description: 'Opens an issue in a repository. Needs write access.',
      source: 'custom',
      capability: { writes: true, checkpointable: false, idempotent: false, destructive: false, openWorld: true },
      inputSchema: {
        type: 'object',
        properties: {
          title: { type: 'string', description: 'left out' },
          labels: { type: 'array', items: { type: 'string' } },
          'x-kind': { enum: ['bug', 'task'] },
        },
        required: ['title'],
      },
      outputSchema: { type: 'object', properties: { id: { type: 'integer' } }, required: ['id'] },
    });
    expect(line).toBe(
      '/** Opens an issue in a repository. */ issues_create(i: { title: string; labels?: string[]; "x-kind"?: "bug"|"task" }): Promise<{ id: number }>;',
    );
  });

  it('survives odd schemas: unions, nullable types, deep nesting, booleans, comment ends in descriptions', () => {
    expect(typeOf({ type: ['string', 'null'] }, 3)).toBe('string|null');
    expect(typeOf({ anyOf: [{ type: 'number' }, { const: 'auto' }] }, 3)).toBe('number|"auto"');
    expect(typeOf({ type: 'object', properties: { a: { type: 'object', properties: { b: { type: 'object', properties: { c: {} } } } } } }, 2)).toBe(
      '{ a?: { b?: object } }',
    );
    expect(typeOf(true, 3)).toBe('any');
    expect(typeOf('nonsense', 3)).toBe('any');
    const line = declareTool('t', {
      name: 't',
      description: 'Ends a comment */ here.',
      source: 'custom',
      capability: { writes: false, checkpointable: true, idempotent: true, destructive: false, openWorld: false },
    });
    expect(line).not.toContain('*/ here');
  });
});
