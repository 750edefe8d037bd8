/**
 * Markers on content the HTTP front makes up for a client of another shape:
 * the signature of a thinking block sent to an Anthropic client and the id
 * prefix of a reasoning item sent to a Responses client (the real replay
 * state stays on the gateway). Such items mean nothing to a real endpoint, so
 * the same-shape path leaves them out when a client sends them back (a
 * conversation that moved to a route of the client's own shape).
 */
export const GATEWAY_THINKING_SIGNATURE = "byok-gateway:replay-kept-on-gateway";
export const GATEWAY_REASONING_ID_PREFIX = "rs_byokgw_";
