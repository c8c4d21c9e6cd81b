import * as toolContext from './index';

describe('@ca/tool-context public API', () => {
  it('exports exactly the documented runtime names', () => {
    expect(Object.keys(toolContext).sort()).toEqual([
      'CHANGE_KINDS',
      'CancellationToken',
      'ContextValidationError',
      'PathConfinementError',
      'ToolCancelledError',
      'confinePath',
      'confinementRootsOf',
      'createExecutionContext',
      'createExecutionId',
      'fileTypeOf',
      'isPathInside',
      'openConfinedDirectory',
      'openConfinedEntry',
      'openConfinedFile',
      'openConfinedParent',
      'planAllowsNetwork',
      'resolveConfinementRoot',
      'resolveRealPath',
      'resourceFromPath',
      'resourcePath',
      'sandboxWritesForPlan',
      'toTraceError',
      'toTraceRepairs',
    ]);
  });

  it('keeps internals such as the validators and leak counters out of the entry', () => {
    const names = Object.keys(toolContext);
    for (const internal of ['freezeChange', 'freezeTrace', 'freezeResources', 'normalizePlanPolicy', 'getCancellationListenerCounts', 'describeType']) {
      expect(names).not.toContain(internal);
    }
  });
});
