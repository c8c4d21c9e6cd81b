import * as publicApi from './index';
import * as testing from './testing/index';

describe('@ca/tool-lifecycle public API', () => {
  it('exports exactly the documented runtime names', () => {
    expect(Object.keys(publicApi).sort()).toEqual([
      'APPROVAL_HANDLER',
      'APPROVAL_KEY',
      'APPROVAL_STORE',
      'DEFAULT_HOOK_TIMEOUT_MS',
      'INTERACTION_HANDLER',
      'MAX_HOOK_NOTE_LENGTH',
      'MAX_LISTED_APPROVALS',
      'MAX_LISTED_TOOLS',
      'MemoryApprovalStore',
      'PLAN_REGISTRY',
      'PROCESS_GROUPS_SUPPORTED',
      'PlanRegistryError',
      'RUNTIME_CLOCK',
      'RUNTIME_LOGGER',
      'SAMPLING_HANDLER',
      'SCHEMA_VALIDATOR',
      'TOOL_HOOK',
      'TOOL_LIFECYCLE_CACHE',
      'TOOL_RUNTIME',
      'TOOL_RUNTIME_OPTIONS',
      'TOOL_SOURCE',
      'ToolAccessDeniedError',
      'ToolActivationError',
      'ToolApprovalDeniedError',
      'ToolCheckpointRequiredError',
      'ToolDeactivationError',
      'ToolExecutionError',
      'ToolHookError',
      'ToolHookRefusedError',
      'ToolInvalidArgumentError',
      'ToolLifecycleCache',
      'ToolLimitExceededError',
      'ToolNotActivatedError',
      'ToolNotFoundError',
      'ToolPlanEndedError',
      'ToolRegistrationError',
      'ToolRuleError',
      'ToolRuntime',
      'ToolRuntimeError',
      'ToolSet',
      'approvalThroughInteraction',
      'canonicalJson',
      'checkPlanControlMessage',
      'checkPlanProgress',
      'checkPlanRegistration',
      'closestNames',
      'compileToolPattern',
      'compileToolRules',
      'createApprovalMessage',
      'createCancelMessage',
      'createConsoleLogger',
      'createRedactingLogger',
      'fingerprintTool',
      'parsePlanControlMessage',
      'parseRegisteredPlan',
      'planControlMessageKey',
      'planIdProblem',
      'policyRefusal',
      'registerToolRuntime',
      'signalProcessGroup',
      'silentLogger',
      'systemClock',
      'toolFailure',
      'toolSuccess',
    ]);
  });

  it('exports the test doubles from the testing subpath only', () => {
    expect(Object.keys(testing).sort()).toEqual([
      'InMemoryPlanRegistry',
      'InMemoryToolSource',
      'RecordingLogger',
      'TestTool',
      'isProcessAlive',
      'sandboxAvailableForTests',
      'waitUntilProcessesGone',
    ]);
  });

  it('uses Symbol.for tokens so two copies of the package share them', () => {
    expect(publicApi.TOOL_SOURCE).toBe(Symbol.for('ca.tool-lifecycle.ToolSource'));
    expect(publicApi.TOOL_RUNTIME).toBe(Symbol.for('ca.tool-lifecycle.ToolRuntime'));
    expect(publicApi.APPROVAL_HANDLER).toBe(Symbol.for('ca.tool-lifecycle.ApprovalHandler'));
    expect(publicApi.APPROVAL_STORE).toBe(Symbol.for('ca.tool-lifecycle.ApprovalStore'));
    expect(publicApi.APPROVAL_KEY).toBe(Symbol.for('ca.tool-lifecycle.ApprovalKey'));
    expect(publicApi.INTERACTION_HANDLER).toBe(Symbol.for('ca.tool-lifecycle.InteractionHandler'));
    expect(publicApi.SAMPLING_HANDLER).toBe(Symbol.for('ca.tool-lifecycle.SamplingHandler'));
    expect(publicApi.PLAN_REGISTRY).toBe(Symbol.for('ca.tool-lifecycle.PlanRegistry'));
  });
});
