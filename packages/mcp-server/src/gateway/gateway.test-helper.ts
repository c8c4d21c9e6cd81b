import { ToolRuntime, silentLogger, type ApprovalHandler, type PlanRegistry, type ToolInstance, type ToolRuleDefinition } from '@ca/tool-lifecycle';
import { InMemoryToolSource } from '@ca/tool-lifecycle/testing';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { ClientCapabilities } from '@modelcontextprotocol/sdk/types.js';
import { GatewayClients } from '../clients/gateway-clients';
import { McpGateway, type McpGatewayOptions, type McpGatewaySession } from './mcp-gateway';

/** A runtime over in-memory tools, wired to a gateway the way a service wires it: the gateway's handlers are the runtime's. */
export function gatewayOver(
  tools: readonly ToolInstance[],
  options: Omit<McpGatewayOptions, 'clients'> & {
    readonly fallbackApprovals?: ApprovalHandler;
    readonly rules?: readonly ToolRuleDefinition[];
    readonly planRegistry?: PlanRegistry;
  } = {},
): { runtime: ToolRuntime; gateway: McpGateway; clients: GatewayClients; source: InMemoryToolSource } {
  const clients = new GatewayClients(options.fallbackApprovals === undefined ? {} : { fallbackApprovals: options.fallbackApprovals });
  const source = new InMemoryToolSource([...tools]);
  const runtime = new ToolRuntime({
    sources: [source],
    logger: silentLogger,
    approvalHandler: clients.approvalHandler,
    ...(options.planRegistry === undefined ? {} : { planRegistry: options.planRegistry }),
    ...(options.rules === undefined ? {} : { options: { rules: options.rules } }),
  });
  const { fallbackApprovals: _fallback, rules: _rules, planRegistry: _registry, ...gatewayOptions } = options;
  return { runtime, gateway: new McpGateway(runtime, { ...gatewayOptions, clients }), clients, source };
}

/** A real SDK client connected to the gateway through an in-memory pair of transports. */
export async function connectClient(
  gateway: McpGateway,
  capabilities: ClientCapabilities = {},
  name = 'test-client',
): Promise<{ client: Client; session: McpGatewaySession }> {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const session = await gateway.connect(serverSide, { transport: 'memory' });
  const client = new Client({ name, version: '1.0.0' }, { capabilities });
  await client.connect(clientSide);
  return { client, session };
}

/** Resolves once `check` holds, polling (for effects that follow a notification). */
export async function eventually(check: () => boolean | Promise<boolean>, what: string, timeoutMs = 10_000): Promise<void> {
  const started = Date.now();
  while (!(await check())) {
    if (Date.now() - started > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
