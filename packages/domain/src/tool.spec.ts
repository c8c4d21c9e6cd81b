import { MAX_TOOL_NAME_LENGTH, isValidToolName } from './tool';
import { KNOWN_TOOL_SOURCE_KINDS, MAX_TOOL_SOURCE_KIND_LENGTH, isKnownToolSourceKind, isToolSourceKind } from './tool-source-kind';

describe('isValidToolName', () => {
  it.each(['echo', 'mcp.everything.echo', 'skill.pdf-tools', 'builtin.fs.read', '_private', 'ns:tool'])('accepts %s', (name) =>
    expect(isValidToolName(name)).toBe(true),
  );

  it.each(['', '.hidden', '-x', 'has space', 'slash/name', 'ünïcode', 42, undefined, 'x'.repeat(MAX_TOOL_NAME_LENGTH + 1)])('refuses %p', (name) =>
    expect(isValidToolName(name)).toBe(false),
  );
});

describe('ToolSourceKind', () => {
  it('lists the five known sources of the design', () => {
    expect(KNOWN_TOOL_SOURCE_KINDS).toEqual(['builtin', 'custom', 'mcp', 'skill', 'wrapped']);
    expect(KNOWN_TOOL_SOURCE_KINDS.every(isKnownToolSourceKind)).toBe(true);
    expect(isKnownToolSourceKind('jira')).toBe(false);
  });

  it.each(['builtin', 'jira', 'build-system', 'a1'])('accepts the kind %s', (kind) => expect(isToolSourceKind(kind)).toBe(true));

  it.each(['', 'Jira', '1st', '-x', 'has space', 'a.b', 'x'.repeat(MAX_TOOL_SOURCE_KIND_LENGTH + 1), undefined, 42])('refuses the kind %p', (kind) =>
    expect(isToolSourceKind(kind)).toBe(false),
  );
});
