/**
 * The bridge between the editor (JSON-RPC 2.0, one message per line on
 * stdin/stdout) and the gateway link. It forwards every message unchanged and
 * reads only the JSON-RPC envelope (id, method), for the three cases where the
 * link cannot carry a message the editor waits for:
 *
 * - The gateway refused the member key: every request the editor sent or
 *   sends gets a JSON-RPC error (-32000, authentication required) with the
 *   gateway's reason, so the editor shows it instead of waiting forever.
 * - The gateway lost the link (it restarted, or the drop outlasted its resume
 *   window): requests still unanswered get an error saying so, and the
 *   editor's `initialize` is sent again on the new link (its answer is not
 *   forwarded), so the next requests work; the gateway finds sessions again
 *   by their id.
 * - The editor closed stdin: the link is closed for good.
 *
 * Nothing here knows what a method means.
 */
import type { LinkEvent } from "./gateway-link.ts";

export interface BridgeLink {
  send(text: string): void;
  close(): void;
}

export interface BridgePorts {
  readonly link: BridgeLink;
  /** One line (one JSON-RPC message) to the editor. */
  writeToEditor(line: string): void;
  /** Diagnostics for the editor's log (stderr). */
  log(message: string): void;
}

type JsonRpcId = string | number | null;

/** JSON-RPC / ACP error codes the bridge answers with. */
const AUTH_REQUIRED = -32000;
const INTERNAL_ERROR = -32603;

const REINIT_ID_PREFIX = "byok-bridge-reinit-";

export class Bridge {
  readonly #ports: BridgePorts;
  /** Editor requests not answered yet, by id key. */
  readonly #pending = new Map<string, JsonRpcId>();
  #initialize: unknown;
  #reinitCount = 0;
  #refused: { readonly message: string } | undefined;

  constructor(ports: BridgePorts) {
    this.#ports = ports;
  }

  /** One line from the editor. */
  fromEditor(line: string): void {
    if (line.trim() === "") return;
    const envelope = envelopeOf(line);
    if (envelope?.kind === "request") {
      if (this.#refused !== undefined) return this.#answerError(envelope.id, AUTH_REQUIRED, this.#refused.message);
      this.#pending.set(idKey(envelope.id), envelope.id);
      if (envelope.method === "initialize" && this.#initialize === undefined) this.#initialize = envelope.params;
    }
    this.#ports.link.send(line);
  }

  /** One message from the gateway. */
  fromGateway(text: string): void {
    const envelope = envelopeOf(text);
    if (envelope?.kind === "response") {
      if (typeof envelope.id === "string" && envelope.id.startsWith(REINIT_ID_PREFIX)) {
        if (envelope.error) this.#ports.log(`re-initialize on the new gateway link failed: ${JSON.stringify(envelope.error)}`);
        return;
      }
      this.#pending.delete(idKey(envelope.id));
    }
    this.#ports.writeToEditor(text);
  }

  onLinkEvent(event: LinkEvent): void {
    switch (event.kind) {
      case "connected":
        this.#ports.log(event.resumed ? "gateway link resumed" : "connected to the gateway");
        return;
      case "dropped":
        this.#ports.log(`gateway connection dropped (${event.reason}); reconnecting`);
        return;
      case "reset": {
        this.#ports.log("the gateway no longer had this link; requests in flight are answered with an error");
        for (const id of this.#pending.values()) this.#answerError(id, INTERNAL_ERROR, "The gateway connection was reset (the gateway restarted or the connection was down too long); please try again.");
        this.#pending.clear();
        if (this.#initialize !== undefined) {
          const id = `${REINIT_ID_PREFIX}${++this.#reinitCount}`;
          this.#ports.link.send(JSON.stringify({ jsonrpc: "2.0", id, method: "initialize", params: this.#initialize }));
        }
        return;
      }
      case "refused": {
        const message = `Authentication required: the gateway refused the member key (${event.message}). Check --key / BYOK_MEMBER_KEY.`;
        this.#refused = { message };
        this.#ports.log(message);
        for (const id of this.#pending.values()) this.#answerError(id, AUTH_REQUIRED, message);
        this.#pending.clear();
        return;
      }
      default: {
        const unreachable: never = event;
        this.#ports.log(`unknown link event ${JSON.stringify(unreachable)}`);
      }
    }
  }

  /** The editor closed stdin: the session is over. */
  editorClosed(): void {
    this.#ports.link.close();
  }

  #answerError(id: JsonRpcId, code: number, message: string): void {
    this.#ports.writeToEditor(JSON.stringify({ jsonrpc: "2.0", id, error: { code, message } }));
  }
}

type Envelope =
  | { readonly kind: "request"; readonly id: JsonRpcId; readonly method: string; readonly params: unknown }
  | { readonly kind: "notification"; readonly method: string }
  | { readonly kind: "response"; readonly id: JsonRpcId; readonly error: unknown };

/** The JSON-RPC envelope of a message; undefined for anything else (forwarded as is, the peer answers it). */
function envelopeOf(text: string): Envelope | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined;
  const m = value as Record<string, unknown>;
  const id = m["id"];
  const hasId = typeof id === "string" || typeof id === "number" || id === null;
  if (typeof m["method"] === "string") {
    return "id" in m && hasId ? { kind: "request", id: id as JsonRpcId, method: m["method"], params: m["params"] } : { kind: "notification", method: m["method"] };
  }
  if ("id" in m && hasId && ("result" in m || "error" in m)) return { kind: "response", id: id as JsonRpcId, error: m["error"] };
  return undefined;
}

function idKey(id: JsonRpcId): string {
  return `${typeof id}:${String(id)}`;
}
