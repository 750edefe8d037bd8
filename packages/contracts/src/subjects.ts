/**
 * NATS subjects and stream names of the bus contract (design/ARCHITECTURE.md §3.1).
 * Every name takes a prefix so that tests (and several deployments on one NATS)
 * never share subjects or streams. Production uses the default prefix "byok".
 * The ids that go into subjects (and their formats) are in ids.ts.
 */
import type { ProviderCallId, RunId } from "./ids.ts";

export interface BusNames {
  readonly prefix: string;
  /** JetStream work-queue stream holding PreparedRun messages. */
  readonly runsStream: string;
  readonly runStart: string;
  /** Durable pull consumer shared by all run workers. */
  readonly runWorkersConsumer: string;
  /** JetStream stream holding ClientCommands for every run. */
  readonly commandsStream: string;
  runCommands(runId: RunId): string;
  readonly allRunCommands: string;
  /** JetStream stream with one marker per run a worker took (the first taker's publish is the only one that succeeds). */
  readonly runsTakenStream: string;
  runTaken(runId: RunId): string;
  readonly allRunsTaken: string;
  /** JetStream stream of prompt tool sets, one message per set on `toolSet(digest)` (PromptSpec.tools_digest). */
  readonly toolSetsStream: string;
  /** `digestHex`: the lower-case hex of a tool set's SHA-256. */
  toolSet(digestHex: string): string;
  readonly allToolSets: string;
  runEvents(runId: RunId): string;
  runState(runId: RunId): string;
  readonly providerInvoke: string;
  providerCancel(callId: ProviderCallId): string;
  /** Every call's cancel subject (one subscription per gateway process). */
  readonly allProviderCancels: string;
  store(operation: string): string;
  readonly storeWildcard: string;
  /** Served by the cursor adapter instance that holds the request's RunSSE: forwarded appends, owner probes. */
  adapterRun(requestId: RunId): string;
  /** An empty message when an adapter instance starts serving `adapterRun(requestId)`. */
  adapterRunOwner(requestId: RunId): string;
  /** A run's route as one edge proxy decided it (and the answers to route queries). */
  edgeRoute(requestId: RunId): string;
  edgeRouteQuery(requestId: RunId): string;
  /** Every route query (each edge proxy listens; the one that knows the route answers). */
  readonly allEdgeRouteQueries: string;
  /** NATS KV bucket of the provider gateway's HTTP front: replay state its clients cannot carry. */
  readonly inboundReplayBucket: string;
  /** NATS object store bucket holding bus payloads too large for one NATS message (bus-payloads.ts of @byok/platform). */
  readonly payloadsBucket: string;
  /**
   * JetStream key-value bucket in which one client adapter keeps its own
   * per-session state (what its protocol needs beyond the stored history);
   * `client` is the adapter's short name ([a-z0-9]+).
   */
  clientSessionsBucket(client: string): string;
}

const TOKEN = /^[A-Za-z0-9_-]+$/;

/** Subject tokens (the bus prefix, run ids) must not contain dots or wildcards. */
export function assertSubjectToken(value: string, what: string): string {
  if (!TOKEN.test(value)) throw new Error(`${what} is not a valid subject token: ${JSON.stringify(value)}`);
  return value;
}

export function busNames(prefix = "byok"): BusNames {
  assertSubjectToken(prefix, "bus prefix");
  const upper = prefix.toUpperCase().replace(/-/g, "_");
  return {
    prefix,
    runsStream: `${upper}_RUNS`,
    runStart: `${prefix}.runs.start`,
    runWorkersConsumer: "run-workers",
    commandsStream: `${upper}_RUN_COMMANDS`,
    runCommands: (runId) => `${prefix}.runs.${assertSubjectToken(runId, "run id")}.cmd`,
    allRunCommands: `${prefix}.runs.*.cmd`,
    runsTakenStream: `${upper}_RUNS_TAKEN`,
    runTaken: (runId) => `${prefix}.runs.${assertSubjectToken(runId, "run id")}.taken`,
    allRunsTaken: `${prefix}.runs.*.taken`,
    toolSetsStream: `${upper}_TOOL_SETS`,
    toolSet: (digestHex) => `${prefix}.toolsets.${assertSubjectToken(digestHex, "tool set digest")}`,
    allToolSets: `${prefix}.toolsets.*`,
    runEvents: (runId) => `${prefix}.runs.${assertSubjectToken(runId, "run id")}.evt`,
    runState: (runId) => `${prefix}.runs.${assertSubjectToken(runId, "run id")}.state`,
    providerInvoke: `${prefix}.provider.invoke`,
    providerCancel: (callId) => `${prefix}.provider.cancel.${callId.replace(/[^A-Za-z0-9_-]/g, "_")}`,
    allProviderCancels: `${prefix}.provider.cancel.*`,
    store: (operation) => `${prefix}.store.${operation}`,
    storeWildcard: `${prefix}.store.>`,
    adapterRun: (requestId) => `${prefix}.adapter.run.${assertSubjectToken(requestId, "request id")}`,
    adapterRunOwner: (requestId) => `${prefix}.adapter.owner.${assertSubjectToken(requestId, "request id")}`,
    edgeRoute: (requestId) => `${prefix}.edge.route.${assertSubjectToken(requestId, "request id")}`,
    edgeRouteQuery: (requestId) => `${prefix}.edge.route-query.${assertSubjectToken(requestId, "request id")}`,
    allEdgeRouteQueries: `${prefix}.edge.route-query.*`,
    inboundReplayBucket: `${upper}_INBOUND_REPLAY`,
    payloadsBucket: `${upper}_PAYLOADS`,
    clientSessionsBucket: (client) => {
      if (!/^[a-z0-9]+$/.test(client)) throw new Error(`client name is not [a-z0-9]+: ${JSON.stringify(client)}`);
      return `${upper}_SESSIONS_${client.toUpperCase()}`;
    },
  };
}

/**
 * Header of a caller liveness probe: the provider gateway sends it, as a
 * request with an empty body, to the reply inbox of a model call it is
 * serving. It is not a ModelEvent (no seq): the caller answers it (any reply)
 * and otherwise ignores it; no responders means the caller is gone.
 */
export const CALLER_PROBE_HEADER = "Byok-Caller-Probe";

/** Queue groups: one member of the group handles each request. */
export const QUEUE_GROUPS = {
  store: "store",
  providerGateway: "provider-gateway",
  /** The owner of a request id (one at a time; the group keeps a forwarded append from reaching two instances). */
  adapterRunOwner: "run-owner",
} as const;
