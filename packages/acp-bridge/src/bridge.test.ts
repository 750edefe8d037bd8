import { describe, expect, it } from "vitest";
import { Bridge } from "./bridge.ts";

function bridge() {
  const toGateway: string[] = [];
  const toEditor: unknown[] = [];
  let closed = false;
  const b = new Bridge({
    link: { send: (t) => void toGateway.push(t), close: () => void (closed = true) },
    writeToEditor: (line) => void toEditor.push(JSON.parse(line)),
    log: () => undefined,
  });
  return { b, toGateway, toEditor, closed: () => closed };
}

const request = (id: number, method: string, params: unknown = {}) => JSON.stringify({ jsonrpc: "2.0", id, method, params });

describe("bridge", () => {
  it("forwards messages both ways unchanged", () => {
    const { b, toGateway, toEditor } = bridge();
    const line = request(1, "initialize", { protocolVersion: 1 });
    b.fromEditor(line);
    b.fromGateway('{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1}}');
    expect(toGateway).toEqual([line]);
    expect(toEditor).toEqual([{ jsonrpc: "2.0", id: 1, result: { protocolVersion: 1 } }]);
  });

  it("answers every request with an authentication error once the gateway refused the key", () => {
    const { b, toGateway, toEditor } = bridge();
    b.fromEditor(request(1, "initialize"));
    b.onLinkEvent({ kind: "refused", status: 401, message: "unknown or revoked member key" });
    b.fromEditor(request(2, "session/new", { cwd: "/w", mcpServers: [] }));
    expect(toGateway).toHaveLength(1);
    expect(toEditor).toEqual([
      { jsonrpc: "2.0", id: 1, error: { code: -32000, message: expect.stringContaining("unknown or revoked member key") } },
      { jsonrpc: "2.0", id: 2, error: { code: -32000, message: expect.stringContaining("refused the member key") } },
    ]);
  });

  it("after a lost link, fails the requests in flight and initializes the new link again", () => {
    const { b, toGateway, toEditor } = bridge();
    b.fromEditor(request(1, "initialize", { protocolVersion: 1, clientCapabilities: { terminal: true } }));
    b.fromGateway('{"jsonrpc":"2.0","id":1,"result":{}}');
    b.fromEditor(request(2, "session/prompt", { sessionId: "s", prompt: [] }));
    b.onLinkEvent({ kind: "reset" });
    expect(toEditor[1]).toMatchObject({ id: 2, error: { code: -32603 } });
    const reinit = JSON.parse(toGateway.at(-1) ?? "{}") as { id: string; method: string; params: unknown };
    expect(reinit).toMatchObject({ method: "initialize", params: { protocolVersion: 1, clientCapabilities: { terminal: true } } });
    // The answer to the bridge's own initialize is not the editor's business.
    b.fromGateway(JSON.stringify({ jsonrpc: "2.0", id: reinit.id, result: {} }));
    expect(toEditor).toHaveLength(2);
  });

  it("closes the link when the editor closes stdin", () => {
    const { b, closed } = bridge();
    b.editorClosed();
    expect(closed()).toBe(true);
  });
});
