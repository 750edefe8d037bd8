/**
 * StoreClient's error mapping without NATS or a store: a stand-in connection
 * answers each request with given bytes or throws what nats.js throws.
 */
import { describe, expect, it } from "vitest";
import { create, toBinary, type DescMessage, type MessageInitShape } from "@bufbuild/protobuf";
import { NoRespondersError, RequestError, TimeoutError, type NatsConnection } from "@nats-io/transport-node";
import {
  BeginRunResponseSchema,
  busNames,
  GetBlobsResponseSchema,
  GetRunResponseSchema,
  parseRunId,
  RunStatus,
  StoreErrorKind,
  VerifyMemberKeyResponseSchema,
} from "@byok/contracts";
import { StoreClient } from "./store-client.ts";
import { StoreFailure, type StoreFailureKind } from "./store-failure.ts";

const names = busNames("unit");
const runId = parseRunId("run-1");

interface Stand {
  client: StoreClient;
  subjects: string[];
}

/** A client whose every request gets `answer()` (bytes) or throws it. */
function clientAnswering(answer: () => Uint8Array): Stand {
  const subjects: string[] = [];
  const nc = {
    request: async (subject: string) => {
      subjects.push(subject);
      return { data: answer() };
    },
  } as unknown as NatsConnection;
  return { client: new StoreClient(nc, names, { timeoutMs: 50 }), subjects };
}

function reply<S extends DescMessage>(schema: S, init: MessageInitShape<S>): () => Uint8Array {
  return () => toBinary(schema, create(schema, init));
}

async function failureOf(call: Promise<unknown>): Promise<StoreFailure> {
  const error = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof StoreFailure)) throw new Error(`expected a StoreFailure, got ${String(error)}`);
  return error;
}

describe("StoreClient error mapping", () => {
  it("maps every StoreError kind of a response onto the failure union", async () => {
    const cases: Array<[StoreErrorKind, StoreFailureKind]> = [
      [StoreErrorKind.NOT_FOUND, "not_found"],
      [StoreErrorKind.NOT_ACTIVE, "not_active"],
      [StoreErrorKind.HEAD_MISMATCH, "head_mismatch"],
      [StoreErrorKind.INVALID, "invalid"],
      [StoreErrorKind.FORBIDDEN, "forbidden"],
      [StoreErrorKind.INTERNAL, "internal"],
      [StoreErrorKind.UNAVAILABLE, "unavailable"],
      // An error without a kind, or one this version does not know, is still an error.
      [StoreErrorKind.UNSPECIFIED, "internal"],
      [99 as StoreErrorKind, "internal"],
    ];
    for (const [storeKind, kind] of cases) {
      const { client } = clientAnswering(reply(GetRunResponseSchema, { error: { kind: storeKind, message: "said the store" } }));
      const failure = await failureOf(client.getRun(runId));
      expect({ storeKind, kind: failure.kind }).toEqual({ storeKind, kind });
      expect(failure).toMatchObject({ operation: "run.get", detail: "said the store", message: `store run.get: ${kind}: said the store` });
      expect(failure.retryable).toBe(kind === "unavailable");
    }
  });

  it("names the kind when the store sent no message", async () => {
    const { client } = clientAnswering(reply(GetRunResponseSchema, { error: { kind: StoreErrorKind.FORBIDDEN } }));
    expect((await failureOf(client.getRun(runId))).detail).toBe("FORBIDDEN");
  });

  it("maps bus trouble to unavailable and an undecodable reply to internal", async () => {
    const thrown: Array<[Error, StoreFailureKind]> = [
      [new TimeoutError(), "unavailable"],
      [new RequestError("no responders", { cause: new NoRespondersError("unit.store.run.get") }), "unavailable"],
      [new Error("connection closed"), "unavailable"],
    ];
    for (const [error, kind] of thrown) {
      const { client } = clientAnswering(() => {
        throw error;
      });
      const failure = await failureOf(client.getRun(runId));
      expect(failure.kind).toBe(kind);
      expect(failure.cause).toBeDefined();
    }
    const garbage = clientAnswering(() => new Uint8Array([0xff, 0xff, 0xff]));
    expect((await failureOf(garbage.client.getRun(runId))).kind).toBe("internal");
  });

  it("treats a response without what the store always sends as internal", async () => {
    const { client } = clientAnswering(reply(BeginRunResponseSchema, {}));
    const failure = await failureOf(client.beginRun({ runId, conversationId: "c", memberId: "m" }));
    expect(failure).toMatchObject({ kind: "internal", operation: "run.begin" });
    const verify = clientAnswering(reply(VerifyMemberKeyResponseSchema, {}));
    expect((await failureOf(verify.client.verifyMemberKey("k"))).kind).toBe("internal");
  });

  it("sends each operation on its store subject and returns the result itself", async () => {
    const { client, subjects } = clientAnswering(reply(GetRunResponseSchema, { run: { runId, status: RunStatus.RUNNING } }));
    expect(await client.getRun(runId)).toMatchObject({ runId: "run-1", status: RunStatus.RUNNING });
    expect(subjects).toEqual(["unit.store.run.get"]);
  });

  it("finds no run for not_found, and passes every other failure on", async () => {
    const missing = clientAnswering(reply(GetRunResponseSchema, { error: { kind: StoreErrorKind.NOT_FOUND, message: "no run" } }));
    expect(await missing.client.findRun(runId)).toBeUndefined();
    const down = clientAnswering(reply(GetRunResponseSchema, { error: { kind: StoreErrorKind.UNAVAILABLE, message: "db down" } }));
    expect((await failureOf(down.client.findRun(runId))).kind).toBe("unavailable");
  });

  it("keys blobs by the hex of their id and asks nothing for no ids", async () => {
    const id = new Uint8Array(32).fill(0xab);
    const { client, subjects } = clientAnswering(reply(GetBlobsResponseSchema, { blobs: [{ id, data: new Uint8Array([1, 2]) }] }));
    expect(await client.getBlobs([])).toEqual(new Map());
    expect(subjects).toEqual([]);
    expect(await client.getBlobs([id])).toEqual(new Map([["ab".repeat(32), new Uint8Array([1, 2])]]));
  });
});
