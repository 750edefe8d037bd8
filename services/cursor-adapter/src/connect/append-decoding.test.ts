import { describe, expect, it } from "vitest";
import { create } from "@bufbuild/protobuf";
import fc from "fast-check";
import { aiserver } from "@byok/cursor-protocol";
import { decodeBidiAppend } from "./append-decoding.ts";

const HEX_OF_EVEN_LENGTH = /^(?:[0-9a-fA-F]{2})*$/;
const NOT_HEX = "data is not a hex string of even length";

function decode(data: string) {
  return decodeBidiAppend(create(aiserver.BidiAppendRequestSchema, { requestId: { requestId: "req" }, appendSeqno: 0n, data }));
}

describe("decodeBidiAppend: data must be hex of even length", () => {
  it("refuses exactly the data that is not hex pairs (property)", () => {
    const digit = fc.constantFrom(..."0123456789abcdefABCDEFgxz -\u00e9".split(""));
    fc.assert(
      fc.property(fc.array(digit, { minLength: 1, maxLength: 40 }), (chars) => {
        const data = chars.join("");
        const refused = decode(data);
        expect(refused.kind === "invalid" && refused.message === NOT_HEX).toBe(!HEX_OF_EVEN_LENGTH.test(data));
      }),
      { numRuns: 3000 },
    );
  });
});
