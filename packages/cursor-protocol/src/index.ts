// Cursor's wire schema (generated). Only the cursor adapter, the edge proxy and the
// test client may import this package. Each generated module is re-exported whole as
// one namespace (several hundred generated names; lint allows `export *` only from gen/).
export * as agent from "./gen/cursor/agent/v1/agent_pb.js";
export * as aiserver from "./gen/cursor/aiserver/v1/aiserver_pb.js";
export * as tools from "./gen/cursor/agent/v1/tools_pb.js";
