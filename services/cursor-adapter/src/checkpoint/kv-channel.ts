/**
 * The KV half of one Cursor run (cursor-agent-protocol §5): the server asks the
 * client to store (SET) or return (GET) a content-addressed blob; the client
 * answers with the same numeric id. Ids are per request id, start at 0 and only
 * grow. Every request has a deadline; close() fails whatever is still pending.
 *
 * The deadlines share one timer, armed for the earliest of them: a long
 * history is thousands of GETs, 64 in flight, and a timer set and cleared per
 * request was about 2 % of the adapter's CPU on such a turn. When it fires it
 * fails what is due and re-arms for the earliest deadline left.
 */
import { create } from "@bufbuild/protobuf";
import { agent } from "@byok/cursor-protocol";
import type { Logger } from "@byok/platform";
import { blobKey, blobMatches } from "./blob-id.ts";

export type KvErrorKind = "client_error" | "timeout" | "hash_mismatch" | "closed";

/** How one KV request ended (metrics): answered, or the error kind it failed with. */
export type KvRoundTripOutcome = "ok" | KvErrorKind;

export class KvError extends Error {
  override readonly name = "KvError";
  readonly kind: KvErrorKind;
  constructor(kind: KvErrorKind, message: string) {
    super(message);
    this.kind = kind;
  }
}

interface PendingSet {
  op: "set";
  blobId: Uint8Array;
  resolve(): void;
  reject(error: KvError): void;
  /** performance.now() by which the client must have answered. */
  deadline: number;
}

interface PendingGet {
  op: "get";
  blobId: Uint8Array;
  resolve(data: Uint8Array): void;
  reject(error: KvError): void;
  deadline: number;
}

export interface KvChannelOptions {
  send(message: agent.AgentServerMessage): void;
  log: Logger;
  setTimeoutMs: number;
  getTimeoutMs: number;
  /** Told how each request ended; `sentAt` is its performance.now() when sent. */
  onRoundTrip?: (op: "set" | "get", outcome: KvRoundTripOutcome, sentAt: number) => void;
}

export class KvChannel {
  readonly #options: KvChannelOptions;
  readonly #pending = new Map<number, PendingSet | PendingGet>();
  #nextId = 0;
  /** Why the channel was closed (its error is made only for a request it fails: most runs close with none pending). */
  #closedReason: string | undefined;
  /** The one deadline timer and the performance.now() it is armed for (Infinity: none). */
  #timer: NodeJS.Timeout | undefined;
  #timerAt = Infinity;

  constructor(options: KvChannelOptions) {
    this.#options = options;
  }

  /** SET a blob; resolves when the client acknowledged it. */
  set(blobId: Uint8Array, data: Uint8Array): Promise<void> {
    return this.#timed("set", (resolve: () => void, reject: (error: KvError) => void) => {
      if (this.#closedReason !== undefined) return reject(new KvError("closed", this.#closedReason));
      const id = this.#nextId++;
      this.#pending.set(id, { op: "set", blobId, resolve, reject, deadline: this.#deadline(this.#options.setTimeoutMs) });
      this.#send(id, { case: "setBlobArgs", value: create(agent.SetBlobArgsSchema, { blobId, blobData: data }) });
    });
  }

  /** GET a blob from the client; the bytes are checked against the id. */
  get(blobId: Uint8Array): Promise<Uint8Array> {
    return this.#timed("get", (resolve: (data: Uint8Array) => void, reject: (error: KvError) => void) => {
      if (this.#closedReason !== undefined) return reject(new KvError("closed", this.#closedReason));
      const id = this.#nextId++;
      this.#pending.set(id, { op: "get", blobId, resolve, reject, deadline: this.#deadline(this.#options.getTimeoutMs) });
      this.#send(id, { case: "getBlobArgs", value: create(agent.GetBlobArgsSchema, { blobId }) });
    });
  }

  /** A kv_client_message from the client. Unknown ids are logged and ignored. */
  receive(message: agent.KvClientMessage): void {
    const pending = this.#pending.get(message.id);
    if (pending === undefined) {
      this.#options.log.warn({ kv_id: message.id, kv_result: message.message.case }, "kv result for an unknown id ignored");
      return;
    }
    const result = message.message;
    if (pending.op === "set") {
      if (result.case !== "setBlobResult") return this.#mismatchedResult(message.id, pending.op, result.case);
      this.#settle(message.id);
      if (result.value.error !== undefined) {
        pending.reject(new KvError("client_error", `client could not store blob ${blobKey(pending.blobId)}: ${result.value.error.message}`));
      } else {
        pending.resolve();
      }
      return;
    }
    if (result.case !== "getBlobResult") return this.#mismatchedResult(message.id, pending.op, result.case);
    this.#settle(message.id);
    const { blobData, error } = result.value;
    if (error !== undefined || blobData === undefined) {
      pending.reject(new KvError("client_error", `client could not return blob ${blobKey(pending.blobId)}: ${error?.message ?? "no data"}`));
    } else if (!blobMatches(pending.blobId, blobData)) {
      pending.reject(new KvError("hash_mismatch", `client returned bytes that do not hash to blob ${blobKey(pending.blobId)}`));
    } else {
      pending.resolve(blobData);
    }
  }

  /** Fail everything pending and refuse new requests. */
  close(reason: string): void {
    if (this.#closedReason !== undefined) return;
    this.#closedReason = reason;
    if (this.#pending.size === 0) return;
    const closed = new KvError("closed", reason);
    this.#disarm();
    for (const [id, pending] of this.#pending) {
      this.#pending.delete(id);
      pending.reject(closed);
    }
  }

  get pendingCount(): number {
    return this.#pending.size;
  }

  /** The request's promise; its end is reported to onRoundTrip. */
  #timed<T>(op: "set" | "get", executor: (resolve: (value: T) => void, reject: (error: KvError) => void) => void): Promise<T> {
    const request = new Promise<T>(executor);
    const report = this.#options.onRoundTrip;
    if (report !== undefined) {
      const sentAt = performance.now();
      request.then(
        () => report(op, "ok", sentAt),
        (error: unknown) => report(op, error instanceof KvError ? error.kind : "closed", sentAt),
      );
    }
    return request;
  }

  #send(id: number, message: agent.KvServerMessage["message"]): void {
    this.#options.send(
      create(agent.AgentServerMessageSchema, {
        message: { case: "kvServerMessage", value: create(agent.KvServerMessageSchema, { id, message }) },
      }),
    );
  }

  /** A new request's deadline, `ms` from now; the timer is armed for it when it is the earliest. */
  #deadline(ms: number): number {
    const deadline = performance.now() + ms;
    if (deadline < this.#timerAt) this.#arm(deadline);
    return deadline;
  }

  #arm(at: number): void {
    this.#disarm();
    this.#timerAt = at;
    this.#timer = setTimeout(() => this.#expire(), Math.max(1, Math.ceil(at - performance.now())));
    this.#timer.unref();
  }

  #disarm(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#timerAt = Infinity;
  }

  /** Fails every request whose deadline passed; the timer then waits for the earliest one left. */
  #expire(): void {
    this.#timer = undefined;
    this.#timerAt = Infinity;
    const now = performance.now();
    let next = Infinity;
    for (const [id, pending] of this.#pending) {
      if (pending.deadline <= now) {
        this.#pending.delete(id);
        const ms = pending.op === "set" ? this.#options.setTimeoutMs : this.#options.getTimeoutMs;
        pending.reject(new KvError("timeout", `client did not answer kv ${pending.op} ${blobKey(pending.blobId)} (id ${id}) within ${ms} ms`));
      } else if (pending.deadline < next) {
        next = pending.deadline;
      }
    }
    if (next !== Infinity) this.#arm(next);
  }

  /** An answered request leaves; with none left, the timer goes too. */
  #settle(id: number): void {
    this.#pending.delete(id);
    if (this.#pending.size === 0) this.#disarm();
  }

  #mismatchedResult(id: number, op: string, got: string | undefined): void {
    this.#options.log.warn({ kv_id: id, expected: op, kv_result: got }, "kv result of the wrong kind ignored");
  }
}
