import { describe, expect, it } from "vitest";
import { interpolate, InterpolationError, portsOf, mountsOf } from "./compose-file.ts";

describe("compose interpolation, as Docker Compose does it", () => {
  const vars = { SET: "value", EMPTY: "" };

  it("substitutes ${VAR} and $VAR, unset as empty, and $$ as a literal dollar", () => {
    expect(interpolate("a ${SET} $SET ${NOPE}.", vars)).toBe("a value value .");
    expect(interpolate("cost: $$5 and $${SET}", vars)).toBe("cost: $5 and ${SET}");
  });

  it("distinguishes :- (unset or empty) from - (unset only)", () => {
    expect(interpolate("${EMPTY:-fallback} ${EMPTY-fallback} ${NOPE-fallback}", vars)).toBe("fallback  fallback");
    expect(interpolate("${NOPE:-${SET}}", vars)).toBe("value");
  });

  it("fails on :? (unset or empty) and ? (unset) with the message given", () => {
    expect(() => interpolate("${EMPTY:?set EMPTY in .env}", vars)).toThrow(new InterpolationError("EMPTY: set EMPTY in .env"));
    expect(interpolate("${EMPTY?x}", vars)).toBe("");
    expect(() => interpolate("${NOPE?x}", vars)).toThrow(InterpolationError);
  });

  it("reads short-syntax ports and volumes", () => {
    expect(portsOf({ ports: ["8080:80", "127.0.0.1:9000:9000/tcp", 53] })).toEqual([
      { published: 8080, target: 80 },
      { published: 9000, target: 9000 },
      { published: undefined, target: 53 },
    ]);
    expect(mountsOf({ volumes: ["./config/x.json:/app/x.json:ro", "data:/data"] })).toEqual([
      { kind: "bind", source: "./config/x.json", target: "/app/x.json", readOnly: true },
      { kind: "volume", source: "data", target: "/data", readOnly: false },
    ]);
  });
});
