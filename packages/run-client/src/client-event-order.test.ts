import { describe, expect, it } from "vitest";
import { create } from "@bufbuild/protobuf";
import { ClientEventSchema } from "@byok/contracts";
import { ClientEventOrder } from "./client-event-order.ts";

const event = (seq: number, modelCallIndex = 0) => create(ClientEventSchema, { seq: BigInt(seq), modelCallIndex, event: { case: "textDelta", value: { index: 0, text: "x" } } });

describe("client event order", () => {
  it("sees a gap when events are lost or a new owner counts from 1 again", () => {
    const order = new ClientEventOrder();
    expect(order.accept(event(1))).toMatchObject({ gap: false, newModelCall: true });
    expect(order.accept(event(2))).toMatchObject({ gap: false, newModelCall: false });
    expect(order.accept(event(4))).toMatchObject({ gap: true });
    expect(order.accept(event(1))).toMatchObject({ gap: true });
    expect(order.accept(event(2, 1))).toMatchObject({ gap: false, newModelCall: true, modelCallIndex: 1 });
  });
});
