import { MAX_TOOL_NAME_LENGTH, isValidToolName } from './tool';
import { TOOL_SOURCE_KINDS, isToolSourceKind } from './tool-source-kind';

describe('isValidToolName', () => {
  it.each(['echo', 'mcp.everything.echo', 'skill.pdf-tools', 'builtin.fs.read', '_private', 'ns:tool'])(
    'accepts %s',
    (name) => expect(isValidToolName(name)).toBe(true),
  );

  it.each(['', '.hidden', '-x', 'has space', 'slash/name', 'ünïcode', 42, undefined, 'x'.repeat(MAX_TOOL_NAME_LENGTH + 1)])(
    'refuses %p',
    (name) => expect(isValidToolName(name)).toBe(false),
  );
});

describe('ToolSourceKind', () => {
  it('lists the five sources of the design and recognises only them', () => {
    expect(TOOL_SOURCE_KINDS).toEqual(['builtin', 'custom', 'mcp', 'skill', 'wrapped']);
    expect(TOOL_SOURCE_KINDS.every(isToolSourceKind)).toBe(true);
    expect(isToolSourceKind('skills')).toBe(false);
    expect(isToolSourceKind(undefined)).toBe(false);
  });
});
