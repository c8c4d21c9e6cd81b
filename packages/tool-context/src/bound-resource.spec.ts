import { mkdtempSync, rmSync, writeFileSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resourceFromPath, resourcePath } from './bound-resource';
import { ContextValidationError } from './context-validation-error';
import { createExecutionContext } from './execution-context';

describe('resourceFromPath', () => {
  it('makes a frozen filesystem resource with a file: URI', () => {
    const resource = resourceFromPath({ id: 'workspace', path: '/tmp/project', access: 'write' });
    expect(resource).toEqual({ id: 'workspace', kind: 'filesystem', uri: 'file:///tmp/project', access: 'write' });
    expect(Object.isFrozen(resource)).toBe(true);
  });

  it('keeps a given kind and metadata, and resolves .. segments', () => {
    const resource = resourceFromPath({ id: 'r', path: '/tmp/a/../b', access: 'read', kind: 'git', metadata: { branch: 'main' } });
    expect(resource).toEqual({ id: 'r', kind: 'git', uri: 'file:///tmp/b', access: 'read', metadata: { branch: 'main' } });
    expect(Object.isFrozen(resource.metadata)).toBe(true);
  });

  it('encodes characters that are special in URLs, and resourcePath gives the path back', () => {
    const path = '/tmp/my project/#1 100%/ünï';
    const resource = resourceFromPath({ id: 'odd', path, access: 'read' });
    expect(resource.uri).toBe('file:///tmp/my%20project/%231%20100%25/%C3%BCn%C3%AF');
    expect(resourcePath(resource)).toBe(path);
  });

  it('round-trips a real temporary folder that a context accepts', () => {
    const folder = mkdtempSync(join(tmpdir(), 'ca tool-context #'));
    try {
      const resource = resourceFromPath({ id: 'tmp', path: folder, access: 'write' });
      const ctx = createExecutionContext({ resources: [resource] });
      const file = join(resourcePath(ctx.getResource('tmp')!), 'note.txt');
      writeFileSync(file, 'hello');
      expect(readFileSync(join(folder, 'note.txt'), 'utf8')).toBe('hello');
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });

  it.each(['relative/path', '', './x', 42])('refuses the path %p', (path) => {
    const call = () => resourceFromPath({ id: 'r', path: path as string, access: 'read' });
    expect(call).toThrow(ContextValidationError);
    expect(call).toThrow(/Invalid path: expected an absolute filesystem path .*; resolve it first \(path\.resolve\)\./);
  });

  it('refuses an invalid id or access with the same rules as a context', () => {
    expect(() => resourceFromPath({ id: '', path: '/tmp', access: 'read' })).toThrow(/Invalid resource\.id/);
    expect(() => resourceFromPath({ id: 'r', path: '/tmp', access: 'rw' as never })).toThrow(/Invalid resource\.access/);
    expect(() => resourceFromPath(undefined as never)).toThrow(/Invalid options/);
  });
});

describe('resourcePath', () => {
  it('refuses a resource that is not a file: URI', () => {
    const call = () => resourcePath({ id: 'docs', kind: 'http', uri: 'https://example.com/', access: 'read' });
    expect(call).toThrow(ContextValidationError);
    expect(call).toThrow(/Invalid resource\.uri: resource "docs" has the URI the string "https:\/\/example\.com\/", which is not a file: URI/);
  });

  it('refuses a file: URI that names no local path, keeping the cause', () => {
    try {
      resourcePath({ id: 'remote', kind: 'filesystem', uri: 'file:///tmp/a%2Fb', access: 'read' });
      throw new Error('expected resourcePath to throw');
    } catch (error) {
      expect(ContextValidationError.isInstance(error)).toBe(true);
      expect((error as Error).message).toMatch(/names no local path/);
      expect((error as Error).cause).toMatchObject({ code: 'ERR_INVALID_FILE_URL_PATH' });
    }
  });
});
