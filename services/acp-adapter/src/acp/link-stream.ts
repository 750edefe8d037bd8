/**
 * An ACP stream (the SDK's pair of message streams) over a bridge link: each
 * link message is one JSON-RPC message. The stream lives as long as the link,
 * not as long as one socket, so the ACP connection above it never sees a
 * reconnect. A message that is not JSON is dropped with a warning (the SDK
 * answers malformed JSON-RPC itself).
 */
import type { Logger } from "@byok/platform";
import type { ServerLink } from "../link/server-link.ts";
import type { AnyMessage, Stream } from "./acp-types.ts";

export function linkStream(link: ServerLink, log: Logger): { stream: Stream; close(): void } {
  let controller: ReadableStreamDefaultController<AnyMessage> | undefined;
  let closed = false;
  const readable = new ReadableStream<AnyMessage>({
    start(c) {
      controller = c;
    },
  });
  link.onMessage((text) => {
    if (closed) return;
    let message: unknown;
    try {
      message = JSON.parse(text);
    } catch {
      log.warn({ link_id: link.id }, "a bridge message is not JSON; dropped");
      return;
    }
    controller?.enqueue(message as AnyMessage);
  });
  const writable = new WritableStream<AnyMessage>({
    write(message) {
      link.send(JSON.stringify(message));
    },
  });
  return {
    stream: { readable, writable },
    close() {
      if (closed) return;
      closed = true;
      controller?.close();
    },
  };
}
