/**
 * The SDK's agent app on one bridge link: one ACP connection per link (the
 * link outlives its sockets, so the connection outlives network drops), each
 * ACP method routed to AcpAgent with the link's EditorConnection, and every
 * error mapped once (acp/failures.ts) into the JSON-RPC error the editor sees.
 * The SDK parses and checks params against the protocol schema before a
 * handler runs, and refuses requests before `initialize`.
 *
 * `session/set_model` (the older, unstable model picker some editors still
 * send) is registered as an extension method with its own parser.
 */
import type { Logger } from "@byok/platform";
import type { AcpAgent } from "../agent/acp-agent.ts";
import { EditorConnection } from "../agent/editor-connection.ts";
import type { ServerLink } from "../link/server-link.ts";
import { acpMethods, agentApp, RequestError } from "./acp-types.ts";
import { editorClientOf } from "./editor-client.ts";
import { acpFailureOf, requestErrorOf } from "./failures.ts";
import { linkStream } from "./link-stream.ts";

const SET_MODEL_METHOD = "session/set_model";

interface SetModelParams {
  readonly sessionId: string;
  readonly modelId: string;
}

function parseSetModel(params: unknown): SetModelParams {
  const p = params as Partial<Record<keyof SetModelParams, unknown>> | null;
  if (typeof p?.sessionId !== "string" || typeof p.modelId !== "string") throw RequestError.invalidParams(undefined, "session/set_model needs sessionId and modelId");
  return { sessionId: p.sessionId, modelId: p.modelId };
}

/** Maps whatever a handler throws to its JSON-RPC error. */
async function answered<T>(sessionId: string, work: () => T | Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw requestErrorOf(acpFailureOf(error, sessionId));
  }
}

/** Serves ACP on `link` until it ends. */
export function serveAcp(link: ServerLink, agent: AcpAgent, log: Logger): void {
  const { stream, close } = linkStream(link, log);
  // The editor connection needs the SDK connection's client context, which exists once the app is connected;
  // handlers run only for messages read after that.
  const holder: { conn?: EditorConnection } = {};
  const current = (): EditorConnection => {
    if (holder.conn === undefined) throw new Error("the ACP connection is not set up");
    return holder.conn;
  };
  const app = agentApp({ name: "byok-acp-adapter" })
    .onRequest(acpMethods.agent.initialize, ({ params }) => answered("", () => agent.initialize(current(), params)))
    .onRequest(acpMethods.agent.authenticate, ({ params }) => answered("", () => agent.authenticate(params.methodId)))
    .onRequest(acpMethods.agent.session.new, ({ params }) => answered("", () => agent.newSession(current(), params)))
    .onRequest(acpMethods.agent.session.load, ({ params }) => answered(params.sessionId, () => agent.loadSession(current(), params)))
    .onRequest(acpMethods.agent.session.list, ({ params }) => answered("", () => agent.listSessions(current(), params)))
    .onRequest(acpMethods.agent.session.prompt, ({ params, signal }) => answered(params.sessionId, () => agent.prompt(current(), params, signal)))
    .onRequest(acpMethods.agent.session.setMode, ({ params }) => answered(params.sessionId, () => agent.setMode(current(), params)))
    .onRequest(acpMethods.agent.session.setConfigOption, ({ params }) => answered(params.sessionId, () => agent.setConfigOption(current(), params)))
    .onRequest(SET_MODEL_METHOD, parseSetModel, ({ params }) => answered(params.sessionId, () => agent.setModel(current(), params.sessionId, params.modelId)))
    .onNotification(acpMethods.agent.session.cancel, ({ params }) => agent.cancel(current(), params.sessionId));
  const connection = app.connect(stream);
  const opened = new EditorConnection(link.memberId, link.id, editorClientOf(connection.client));
  holder.conn = opened;
  link.whenEnded(() => {
    agent.connectionClosed(opened);
    close();
    connection.close();
  });
}
