/**
 * One Cursor agent run as the IDE drives it over HTTP/1.1 (cursor-agent-protocol.md
 * §1, §5, §9, §15.2): RunSSE (one envelope around BidiRequestId) plus one
 * BidiAppend per upstream message (hex data, append_seqno from 0, sent
 * concurrently), KV SET/GET answered from the client blob store, exec and query
 * requests answered by test hooks, periodic client heartbeats, cancel.
 *
 * Every frame received and every append sent is recorded in `timeline`; rule
 * breaks the client can see by itself (checkpoint referencing a blob that was
 * not ACKed before it, a blob whose id is not its SHA-256, a second turn_ended,
 * bytes after EndStream, an undecodable frame, ...) go to `violations`.
 */
import { performance } from "node:perf_hooks";
import { randomUUID } from "node:crypto";
import { gzipSync } from "node:zlib";
import { create, toBinary, type MessageInitShape } from "@bufbuild/protobuf";
import { agent } from "@byok/cursor-protocol";
import { encodeBidiAppend } from "./append-codec.ts";
import { blobKey } from "./blob-store.ts";
import { checkpointBlobReferences, describeBlob } from "./checkpoint-refs.ts";
import { encodeEnvelope } from "./envelope.ts";
import { startExec, startQuery, type ClientHooks } from "./exec.ts";
import { BIDI_APPEND_PATH, RUN_SSE_PATH, type CheckpointRecord, type KvSet, type RunEnd, type RunHost, type RunOptions, type RunResult } from "./run-types.ts";
import { readServerStream } from "./server-stream.ts";
import { checkpointKind, describeTimeline, endLabel, frameLabel, type TimelineEntry } from "./timeline.ts";
import type { StreamResponse } from "./transport.ts";

export { BIDI_APPEND_PATH, RUN_SSE_PATH } from "./run-types.ts";
export type { CheckpointRecord, KvBehaviour, KvSet, RunEnd, RunHost, RunOptions, RunResult } from "./run-types.ts";

export class CursorRun {
  readonly requestId: string;
  readonly timeline: TimelineEntry[] = [];
  readonly violations: string[] = [];
  /** Resolves when the RunSSE body ended and in-flight appends settled. */
  readonly finished: Promise<RunResult>;

  private readonly host: RunHost;
  private readonly options: RunOptions;
  private order = 0;
  private nextSeqno = 0;
  private readonly pendingAppends = new Set<Promise<unknown>>();
  private readonly ackOrderByBlob = new Map<string, number>();
  private readonly blobsSetThisRun = new Set<string>();
  private readonly execAborts = new Map<number, AbortController>();
  private readonly listeners = new Set<() => void>();
  private readonly checkpoints: CheckpointRecord[] = [];
  private turnEnded: agent.TurnEndedUpdate | undefined;
  private text = "";
  private thinking = "";
  private ended = false;
  private heartbeat: NodeJS.Timeout | undefined;
  private stream: StreamResponse | undefined;
  private readonly openAbort = new AbortController();

  constructor(host: RunHost, options: RunOptions) {
    this.host = host;
    this.options = options;
    this.requestId = options.requestId ?? randomUUID();
    this.finished = this.run();
  }

  // ---- public controls ----

  /** conversation_action{cancel_action{reason}} on this request id. */
  cancel(reason = "user cancelled"): Promise<void> {
    return this.append(
      create(agent.AgentClientMessageSchema, { message: { case: "conversationAction", value: { action: { case: "cancelAction", value: { reason } } } } }),
      "cancel",
    );
  }

  /** Drop the RunSSE connection without waiting for EndStream (the IDE window closed). */
  disconnect(): void {
    this.openAbort.abort();
    this.stream?.abort();
  }

  /** Send any AgentClientMessage with the next seqno. */
  send(message: MessageInitShape<typeof agent.AgentClientMessageSchema>, label = "custom"): Promise<void> {
    return this.append(create(agent.AgentClientMessageSchema, message), label);
  }

  /** Wait until a received frame matches (frames already received count). */
  waitForFrame(match: (message: agent.AgentServerMessage) => boolean, what: string, timeoutMs = 15_000): Promise<agent.AgentServerMessage> {
    return new Promise((resolve, reject) => {
      const check = (): boolean => {
        for (const e of this.timeline) if (e.kind === "frame" && match(e.message)) {
          cleanup();
          resolve(e.message);
          return true;
        }
        if (this.ended) {
          cleanup();
          reject(new Error(`run ended before ${what}; frames: ${describeTimeline(this.timeline)}`));
          return true;
        }
        return false;
      };
      const timer = setTimeout(() => {
        cleanup();
        reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}; frames: ${describeTimeline(this.timeline)}`));
      }, timeoutMs);
      const listener = (): void => void check();
      const cleanup = (): void => {
        clearTimeout(timer);
        this.listeners.delete(listener);
      };
      this.listeners.add(listener);
      check();
    });
  }

  // ---- the run ----

  private async run(): Promise<RunResult> {
    const bodyOfRunSse = encodeEnvelope(toBinary(agent.BidiRequestIdSchema, create(agent.BidiRequestIdSchema, { requestId: this.requestId })));
    const headers = {
      ...this.host.baseHeaders,
      ...this.options.headers,
      "content-type": "application/connect+proto",
      "connect-accept-encoding": "gzip",
      "x-request-id": this.requestId,
    };
    const first = (): Promise<void> => this.append(this.options.runRequest, "run_request", this.options.gzipFirstAppend === true);
    let streamPromise: Promise<StreamResponse>;
    switch (this.options.start ?? "concurrent") {
      case "concurrent":
        streamPromise = this.host.transport.stream(RUN_SSE_PATH, headers, bodyOfRunSse, undefined, this.openAbort.signal);
        void first();
        break;
      case "stream-first": {
        let sent!: () => void;
        const requestWritten = new Promise<void>((r) => (sent = r));
        streamPromise = this.host.transport.stream(RUN_SSE_PATH, headers, bodyOfRunSse, sent, this.openAbort.signal);
        void requestWritten.then(first);
        break;
      }
      case "append-first":
        await first();
        streamPromise = this.host.transport.stream(RUN_SSE_PATH, headers, bodyOfRunSse, undefined, this.openAbort.signal);
        break;
    }
    this.startHeartbeat();
    let end: RunEnd;
    try {
      const stream = await streamPromise;
      this.stream = stream;
      end = await readServerStream(stream, {
        onFrame: (message) => this.onFrame(message),
        onEnd: (outcome) => void this.record({ kind: "end", label: endLabel(outcome), outcome }),
        onViolation: (text) => void this.violations.push(text),
      });
    } catch (err) {
      end = { kind: "broken", reason: `RunSSE request failed: ${(err as Error).message}` };
      this.record({ kind: "transport", label: "transport_error", error: (err as Error).message });
    }
    this.ended = true;
    if (this.heartbeat !== undefined) clearInterval(this.heartbeat);
    for (const c of this.execAborts.values()) c.abort();
    this.notify();
    await Promise.allSettled([...this.pendingAppends]);
    return this.result(end);
  }

  private onFrame(message: agent.AgentServerMessage): void {
    const entry = this.record({ kind: "frame", label: frameLabel(message), message });
    const m = message.message;
    switch (m.case) {
      case "interactionUpdate":
        this.onInteractionUpdate(m.value);
        break;
      case "kvServerMessage":
        this.onKv(m.value);
        break;
      case "conversationCheckpointUpdate":
        this.onCheckpoint(m.value, entry.order);
        break;
      case "execServerMessage":
        this.onExec(m.value);
        break;
      case "execServerControlMessage":
        if (m.value.message.case === "abort") this.execAborts.get(m.value.message.value.id)?.abort();
        break;
      case "interactionQuery":
        this.onQuery(m.value);
        break;
      case undefined:
        this.violations.push("AgentServerMessage without a message");
        break;
      default: {
        const never: never = m;
        this.violations.push(`unhandled server message ${JSON.stringify(never)}`);
      }
    }
    this.notify();
  }

  private onInteractionUpdate(update: agent.InteractionUpdate): void {
    const u = update.message;
    switch (u.case) {
      case "textDelta":
        this.text += u.value.text;
        break;
      case "thinkingDelta":
        this.thinking += u.value.text;
        break;
      case "turnEnded":
        if (this.turnEnded !== undefined) this.violations.push("second turn_ended");
        this.turnEnded = u.value;
        break;
      default:
        // Everything else (thinking_completed, token_delta, heartbeat, tool cards as the protos grow)
        // is only recorded in the timeline.
        break;
    }
  }

  private onKv(kv: agent.KvServerMessage): void {
    const op = kv.message;
    switch (op.case) {
      case "setBlobArgs": {
        const { blobId, blobData } = op.value;
        const outcome = this.host.blobs.set(blobId, blobData);
        if (outcome.kind === "hash_mismatch") {
          this.violations.push(`kv_set#${kv.id}: blob id ${describeBlob(blobId)} is not the SHA-256 of its data (${outcome.actual.slice(0, 16)})`);
          void this.kvReply(kv.id, { case: "setBlobResult", value: { error: { message: "blob id does not match its SHA-256" } } }, "kv_set_error");
          return;
        }
        this.blobsSetThisRun.add(blobKey(blobId));
        const set: KvSet = { kvId: kv.id, blobId, data: blobData };
        if (this.options.kv?.dropAck?.(set) === true) return;
        const delay = this.options.kv?.ackDelayMs?.(set) ?? 0;
        const ack = (): void => {
          if (this.ended) return;
          void this.kvReply(kv.id, { case: "setBlobResult", value: {} }, `kv_ack#${kv.id}`);
          // kvReply recorded the append synchronously: its order is the current counter.
          if (!this.ackOrderByBlob.has(blobKey(blobId))) this.ackOrderByBlob.set(blobKey(blobId), this.order);
        };
        const schedule = (): void => {
          if (delay > 0) setTimeout(ack, delay);
          else ack();
        };
        const gate = this.options.kv?.ackAfter?.(set);
        if (gate !== undefined) void gate.then(schedule);
        else schedule();
        return;
      }
      case "getBlobArgs": {
        const data = this.host.blobs.get(op.value.blobId);
        void this.kvReply(
          kv.id,
          data === undefined ? { case: "getBlobResult", value: { error: { message: "blob not found" } } } : { case: "getBlobResult", value: { blobData: data } },
          `kv_get_result#${kv.id}`,
        );
        return;
      }
      case undefined:
        this.violations.push(`kv#${kv.id} without an operation`);
        return;
      default: {
        const never: never = op;
        this.violations.push(`unknown kv operation ${JSON.stringify(never)}`);
      }
    }
  }

  private kvReply(id: number, message: MessageInitShape<typeof agent.KvClientMessageSchema>["message"], label: string): Promise<void> {
    return this.append(create(agent.AgentClientMessageSchema, { message: { case: "kvClientMessage", value: { id, message } } }), label);
  }

  private onCheckpoint(state: agent.ConversationStateStructure, order: number): void {
    for (const ref of checkpointBlobReferences(state, this.host.blobs)) {
      const key = blobKey(ref.id);
      if (!this.host.blobs.has(ref.id)) {
        this.violations.push(`checkpoint #${order} ${ref.path} references blob ${describeBlob(ref.id)} the client never received`);
        continue;
      }
      if (!this.blobsSetThisRun.has(key)) continue; // known from an earlier run
      const ackOrder = this.ackOrderByBlob.get(key);
      if (ackOrder === undefined || ackOrder > order)
        this.violations.push(`checkpoint #${order} ${ref.path} references blob ${describeBlob(ref.id)} before its SET was ACKed`);
    }
    this.checkpoints.push({ order, kind: checkpointKind(state), state, beforeTurnEnded: this.turnEnded === undefined });
  }

  private onExec(exec: agent.ExecServerMessage): void {
    const abort = startExec(exec, this.execHooks());
    this.execAborts.set(exec.id, abort);
  }

  private onQuery(query: agent.InteractionQuery): void {
    startQuery(query, this.execHooks());
  }

  private execHooks(): ClientHooks {
    return {
      requestId: this.requestId,
      runHeaders: this.options.headers ?? {},
      onExec: this.options.onExec,
      onQuery: this.options.onQuery,
      append: (message, label) => this.append(message, label),
      violation: (text) => void this.violations.push(text),
    };
  }

  // ---- appends ----

  private append(message: agent.AgentClientMessage, label: string, gzip = false): Promise<void> {
    const seqno = this.nextSeqno++;
    let body = encodeBidiAppend(this.requestId, seqno, message);
    const headers: Record<string, string> = {
      ...this.host.baseHeaders,
      ...this.options.headers,
      "content-type": "application/proto",
      "x-request-id": this.requestId,
    };
    if (gzip) {
      body = gzipSync(body);
      headers["content-encoding"] = "gzip";
    }
    const entry: Extract<TimelineEntry, { kind: "append" }> = this.record({ kind: "append", label: `${label}@${seqno}`, seqno });
    const endedWhenSent = this.ended;
    const pending = this.host.transport
      .unary(BIDI_APPEND_PATH, headers, body)
      .then((res) => {
        entry.status = res.status;
        if (res.status !== 200 && !endedWhenSent && !this.ended)
          this.violations.push(`BidiAppend ${label}@${seqno} answered HTTP ${res.status}: ${res.body.toString("utf8").slice(0, 300)}`);
      })
      .catch((err: unknown) => {
        if (!this.ended) this.violations.push(`BidiAppend ${label}@${seqno} failed: ${(err as Error).message}`);
      });
    this.pendingAppends.add(pending);
    void pending.finally(() => this.pendingAppends.delete(pending));
    return pending;
  }

  private startHeartbeat(): void {
    const every = this.options.heartbeatMs ?? 5000;
    if (every <= 0) return;
    this.heartbeat = setInterval(() => {
      if (!this.ended) void this.append(create(agent.AgentClientMessageSchema, { message: { case: "clientHeartbeat", value: {} } }), "client_heartbeat");
    }, every);
    this.heartbeat.unref();
  }

  // ---- bookkeeping ----

  private record<E extends Omit<TimelineEntry, "order" | "at">>(entry: E): E & { order: number; at: number } {
    const full = { ...entry, order: ++this.order, at: performance.now() };
    this.timeline.push(full as unknown as TimelineEntry);
    return full;
  }

  private notify(): void {
    for (const l of [...this.listeners]) l();
  }

  private result(end: RunEnd): RunResult {
    const settled = this.checkpoints.filter((c) => c.kind === "settled");
    const beforeTurnEnded = this.checkpoints.filter((c) => c.beforeTurnEnded);
    const timeline = this.timeline;
    return {
      requestId: this.requestId,
      end,
      text: this.text,
      thinking: this.thinking,
      turnEnded: this.turnEnded,
      checkpoints: [...this.checkpoints],
      lastSettled: settled[settled.length - 1]?.state,
      resumePoint: beforeTurnEnded[beforeTurnEnded.length - 1]?.state,
      timeline: [...timeline],
      violations: [...this.violations],
      describe: () => describeTimeline(timeline),
    };
  }
}
