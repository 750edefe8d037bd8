/**
 * What a run session needs from the service that hosts it. The transport /
 * service wiring builds one SessionDeps and passes it to createRunSessionFactory.
 */
import type { BusNames } from "@byok/contracts";
import type { Logger, ModelConfig, NatsConnection, WebConfig } from "@byok/platform";
import type { CursorAdapterMetrics } from "../metrics.ts";
import type { PageConverter } from "../web/page-conversion.ts";
import type { HistoryReader } from "../request/history-reader.ts";

export interface SessionTimeouts {
  /** Per store request (history.import, blob.get, blob.put, run.get). */
  storeMs: number;
  /** Deadline of a JetStream publish (PreparedRun, tool result, cancel, client closed), sent again within it. */
  publishDeadlineMs: number;
  /** How long a KV set_blob_args may wait for its set_blob_result. */
  blobAckMs: number;
  /** How long a KV get_blob_args may wait for its get_blob_result. */
  kvGetMs: number;
  /**
   * A published run with no state or client event for this long has its
   * status read from the store; a run that ended there ends the Cursor stream
   * (its terminal state event was lost).
   */
  runStatusCheckMs: number;
}

export interface SessionDeps {
  nc: NatsConnection;
  names: BusNames;
  log: Logger;
  /** BYOK models from the gateway configuration. */
  models: ModelConfig[];
  /** The `web` section of the gateway configuration (WebFetch policy, WebSearch backend). */
  web: WebConfig;
  /** HTML -> Markdown for WebFetch (a worker pool; its owner closes it). */
  converter: PageConverter;
  /** Reads the client's history roots (long ones in the CPU pool); default: on the event loop. */
  histories?: HistoryReader;
  /** Directory holding the Cursor prompt assets (prompt/cursor in the repo). */
  promptDir: string;
  timeouts: SessionTimeouts;
  metrics: CursorAdapterMetrics;
}
