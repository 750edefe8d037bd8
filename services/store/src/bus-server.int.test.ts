import { fromBinary } from "@bufbuild/protobuf";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { busNames, ImportHistoryResponseSchema, STORE_OPERATIONS, StoreErrorKind } from "@byok/contracts";
import { startTestStore, type TestStore } from "./store-test-harness.ts";

describe("store bus API", () => {
  let store: TestStore;
  beforeEach(async () => {
    store = await startTestStore();
  });
  afterEach(() => store.close());

  it("answers every operation of STORE_OPERATIONS", async () => {
    for (const key of Object.keys(STORE_OPERATIONS) as Array<keyof typeof STORE_OPERATIONS>) {
      // An empty request is answered (mostly with a rejection); a missing responder would throw.
      const response = await store.call(key, {});
      expect(response.$typeName, key).toBe(STORE_OPERATIONS[key].response.typeName);
    }
  });

  it("answers an undecodable request with an INTERNAL error", async () => {
    const subject = busNames(store.busPrefix).store(STORE_OPERATIONS.importHistory.name);
    const reply = await store.nc.request(subject, new Uint8Array([0xff, 0xff, 0xff]), { timeout: 5_000 });
    const response = fromBinary(ImportHistoryResponseSchema, reply.data);
    expect(response.error?.kind).toBe(StoreErrorKind.INTERNAL);
  });
});

