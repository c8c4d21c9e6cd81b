import * as publicApi from './index';

describe('@ca/cli public API', () => {
  it('exports exactly the documented runtime names', () => {
    expect(Object.keys(publicApi).sort()).toEqual([
      'CONFIG_FILE_NAMES',
      'CliError',
      'EXIT_CODES',
      'FileResultStore',
      'FileToolListCache',
      'LocalPlanRegistry',
      'agentsConfigSchema',
      'buildRuntime',
      'checkPlanFile',
      'describeSources',
      'loadConfig',
      'loadPlanFile',
      'loadToolModule',
      'main',
      'openPlanRegistry',
      'planFileSchema',
      'processIo',
      'resolveStateDir',
      'runPlanFile',
    ]);
  });

  it('documents its exit codes', () => {
    expect(publicApi.EXIT_CODES).toEqual({ ok: 0, failed: 1, usage: 2, refused: 3, notFound: 4, cancelled: 130 });
  });
});
