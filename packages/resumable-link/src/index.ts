/**
 * @byok/resumable-link: numbered, acknowledged and replayed messages over a
 * socket that may drop (frames.ts: the wire; link-endpoint.ts: one side).
 */
export { LINK_HEADERS, LinkProtocolError, decodeFrame, encodeFrame, parseReceivedHeader } from "./frames.ts";
export type { LinkFrame } from "./frames.ts";
export { LinkEndpoint } from "./link-endpoint.ts";
export type { LinkEndpointOptions, LinkSocket } from "./link-endpoint.ts";
