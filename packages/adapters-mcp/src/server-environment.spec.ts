import { buildServerEnvironment, DEFAULT_INHERITED_ENVIRONMENT } from './server-environment';

describe('buildServerEnvironment', () => {
  const parent = {
    PATH: '/usr/bin',
    HOME: '/home/me',
    LANG: 'en_US.UTF-8',
    SHELL: '/bin/bash',
    AWS_SECRET_ACCESS_KEY: 'secret',
    HTTPS_PROXY: 'http://proxy',
    TERM: '() { :; }; echo pwned',
  };

  it('passes only the safe defaults, the named variables and the declared ones', () => {
    expect(buildServerEnvironment({ TOKEN: 'abc', PATH: '/opt/bin' }, ['HTTPS_PROXY'], parent)).toEqual({
      PATH: '/opt/bin',
      HOME: '/home/me',
      LANG: 'en_US.UTF-8',
      HTTPS_PROXY: 'http://proxy',
      TOKEN: 'abc',
    });
  });

  it('leaves out SHELL and secrets by default', () => {
    expect(DEFAULT_INHERITED_ENVIRONMENT).not.toContain('SHELL');
    const environment = buildServerEnvironment({}, [], parent);
    expect(environment['SHELL']).toBeUndefined();
    expect(environment['AWS_SECRET_ACCESS_KEY']).toBeUndefined();
    expect(environment['TERM']).toBeUndefined();
  });
});
