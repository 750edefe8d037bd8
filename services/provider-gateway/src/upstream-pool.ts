/**
 * The gateway's one set of keep-alive connection pools to model endpoints
 * (undici's Agent: a pool per origin), shared by the SDK clients' fetch and
 * the HTTP front's relay. Idle connections are kept 30 s, or less if the
 * server's Keep-Alive says so.
 */
import { Agent } from "undici";

export const upstreamPool = new Agent({ keepAliveTimeout: 30_000, keepAliveMaxTimeout: 30_000, connections: null, pipelining: 1 });
