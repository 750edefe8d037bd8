#!/usr/bin/env node
/**
 * `byok-acp acp --gateway https://host:port --key <member key> [--ca <file>]`:
 * the command an editor starts as its ACP agent. It reads the arguments and
 * the environment, then carries ACP messages between stdio and the gateway
 * (bridge.ts, gateway-link.ts). Diagnostics go to stderr (the editor's log).
 */
import { createInterface } from "node:readline";
import { parseBridgeArgs } from "./args.ts";
import { Bridge } from "./bridge.ts";
import { GatewayLink } from "./gateway-link.ts";

const parsed = parseBridgeArgs(process.argv.slice(2), process.env);
if (parsed.kind === "usage") {
  process.stderr.write(`${parsed.message}\n`);
  process.exit(2);
}
const { url, key, caFile } = parsed.args;
const log = (message: string): void => void process.stderr.write(`[byok-acp] ${message}\n`);

let caPem: string | undefined;
try {
  caPem = GatewayLink.readCa(caFile);
} catch (error) {
  log(`cannot read the CA file ${caFile}: ${(error as Error).message}`);
  process.exit(2);
}

// The link calls back into the bridge, which sends through the link: the bridge is made first.
const link: { current?: GatewayLink } = {};
const bridge = new Bridge({
  link: { send: (text) => link.current?.send(text), close: () => link.current?.close() },
  writeToEditor: (line) => void process.stdout.write(`${line}\n`),
  log,
});
link.current = new GatewayLink({ url, key, caPem, onMessage: (text) => bridge.fromGateway(text), onEvent: (event) => bridge.onLinkEvent(event) });

const editor = createInterface({ input: process.stdin, crlfDelay: Infinity });
editor.on("line", (line) => bridge.fromEditor(line));
editor.on("close", () => {
  bridge.editorClosed();
  // Let the close frame go out; nothing else keeps the process alive.
  setTimeout(() => process.exit(0), 200).unref();
});
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => {
    bridge.editorClosed();
    process.exit(0);
  });
}
log(`connecting to ${url.origin}`);
link.current.start();
