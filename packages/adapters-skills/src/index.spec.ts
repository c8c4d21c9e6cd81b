import * as skills from './index';

describe('@ca/adapters-skills public API', () => {
  it('exports exactly the documented runtime names', () => {
    expect(Object.keys(skills).sort()).toEqual([
      'DEFAULT_SKILLS_ROOT',
      'FRONTMATTER_CHUNK_BYTES',
      'MAX_SKILL_COMPATIBILITY_LENGTH',
      'MAX_SKILL_DESCRIPTION_LENGTH',
      'MAX_SKILL_NAME_LENGTH',
      'SkillError',
      'SkillsToolSource',
      'createSkillsAdapter',
      'discoverSkills',
      'nodeSkillsFileSystem',
      'registerSkillsAdapter',
    ]);
  });
});
