/**
 * Where an MCP tool call goes on the client. The client only finds a tool when
 * mcp_args carries its exact definition name, provider identifier and tool
 * name, so these come from what the client told us: the run request's MCP
 * definitions (also the dynamic tools the model sees by name) and the live MCP
 * state returned by GetMcpTools.
 */
import { toJsonString } from "@bufbuild/protobuf";
import { ValueSchema, type Value } from "@bufbuild/protobuf/wkt";
import type { tools } from "@byok/cursor-protocol";

export interface McpRoute {
  /** Full definition name (mcp_args.name). */
  name: string;
  providerIdentifier: string;
  toolName: string;
  serverIdentifier: string;
  description: string;
  /** JSON Schema text of the tool input ("" when unknown). */
  inputSchemaJson: string;
}

/** Structural subset of agent.McpToolDefinition / tools.McpStateToolDefinition. */
export interface McpDefinitionLike {
  name: string;
  description: string;
  providerIdentifier: string;
  toolName: string;
  inputSchema?: Value | undefined;
  inputSchemaJson?: string | undefined;
}

/** Read-only view used while planning a call. */
export interface McpRoutes {
  /** Route for CallMcpTool{server, toolName}; `server` may be an identifier or a server name. */
  lookup(server: string, toolName: string): McpRoute | undefined;
  /** Route of a dynamic MCP tool the model calls by its definition name. */
  dynamic(name: string): McpRoute | undefined;
  /** Server identifiers we know of (for error messages). */
  knownServers(): string[];
}

/** JSON Schema text of an MCP definition; an empty object schema when absent. */
export function inputSchemaJsonOf(definition: McpDefinitionLike): string {
  if (definition.inputSchemaJson !== undefined && definition.inputSchemaJson.trim() !== "") return definition.inputSchemaJson;
  if (definition.inputSchema !== undefined && definition.inputSchema.kind.case !== undefined) {
    return toJsonString(ValueSchema, definition.inputSchema);
  }
  return '{"type":"object","properties":{}}';
}

export class McpRouteTable implements McpRoutes {
  readonly #dynamic = new Map<string, McpRoute>();
  readonly #byServerTool = new Map<string, McpRoute>();
  /** server name -> server identifier (from GetMcpTools). */
  readonly #serverIds = new Map<string, string>();

  /** `dynamicDefinitions`: run_request.mcp_tools (model-visible by name). */
  constructor(dynamicDefinitions: readonly McpDefinitionLike[] = []) {
    for (const definition of dynamicDefinitions) {
      const route = routeOf(definition, definition.providerIdentifier);
      this.#dynamic.set(definition.name, route);
      this.#byServerTool.set(key(route.serverIdentifier, route.toolName), route);
    }
  }

  /** Folds in the client's live MCP state (GetMcpTools result); newer entries win. */
  applyState(servers: readonly tools.McpStateServer[]): void {
    for (const server of servers) {
      if (server.serverName !== "") this.#serverIds.set(server.serverName, server.serverIdentifier);
      for (const definition of server.tools) {
        const route = routeOf(definition, server.serverIdentifier || definition.providerIdentifier);
        this.#byServerTool.set(key(route.serverIdentifier, route.toolName), route);
        if (definition.providerIdentifier !== route.serverIdentifier) {
          this.#byServerTool.set(key(definition.providerIdentifier, route.toolName), route);
        }
      }
    }
  }

  lookup(server: string, toolName: string): McpRoute | undefined {
    const direct = this.#byServerTool.get(key(server, toolName));
    if (direct !== undefined) return direct;
    const id = this.#serverIds.get(server);
    return id === undefined ? undefined : this.#byServerTool.get(key(id, toolName));
  }

  dynamic(name: string): McpRoute | undefined {
    return this.#dynamic.get(name);
  }

  knownServers(): string[] {
    return [...new Set([...this.#byServerTool.values()].map((r) => r.serverIdentifier))].sort();
  }
}

function routeOf(definition: McpDefinitionLike, serverIdentifier: string): McpRoute {
  return {
    name: definition.name,
    providerIdentifier: definition.providerIdentifier,
    toolName: definition.toolName,
    serverIdentifier,
    description: definition.description,
    inputSchemaJson: inputSchemaJsonOf(definition),
  };
}

function key(server: string, toolName: string): string {
  return `${server}\u0000${toolName}`;
}
