import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { decodeFrame, LinkProtocolError } from "./frames.ts";
import { LinkEndpoint } from "./link-endpoint.ts";

/** Two endpoints joined by a socket pair that can be cut; frames in flight when cut are lost. */
function pair() {
  const got = { a: [] as string[], b: [] as string[] };
  const a = new LinkEndpoint({ onMessage: (m) => got.a.push(m) });
  const b = new LinkEndpoint({ onMessage: (m) => got.b.push(m) });
  let open = false;
  const connect = () => {
    open = true;
    // The handshake: each side learns how many of its messages the other holds.
    const bHolds = b.received;
    const aHolds = a.received;
    a.attach({ send: (t) => open && b.receive(decodeFrame(t)) }, bHolds);
    b.attach({ send: (t) => open && a.receive(decodeFrame(t)) }, aHolds);
  };
  /** The connection dies; the endpoints notice only at `noticed()` (frames sent meanwhile are lost). */
  const cut = () => {
    open = false;
    return {
      noticed: () => {
        a.detach();
        b.detach();
      },
    };
  };
  return { a, b, got, connect, cut };
}

describe("resumable link endpoint", () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it("delivers every message once and in order across a dropped connection", () => {
    const { a, b, got, connect, cut } = pair();
    connect();
    a.send("1");
    a.send("2");
    const dead = cut();
    // Lost in flight: the socket died before the endpoints noticed.
    a.send("3");
    dead.noticed();
    // Kept while no socket is attached.
    a.send("4");
    b.send("x");
    connect();
    a.send("5");
    expect(got.b).toEqual(["1", "2", "3", "4", "5"]);
    expect(got.a).toEqual(["x"]);
  });

  it("keeps messages until they are acknowledged and drops them after", () => {
    const { a, b, got, connect } = pair();
    connect();
    a.send("1");
    a.send("2");
    expect(a.unacknowledged).toBe(2);
    vi.advanceTimersByTime(60);
    expect(a.unacknowledged).toBe(0);
    expect(got.b).toEqual(["1", "2"]);
    expect(b.received).toBe(2);
  });

  it("acknowledges at once when many messages wait", () => {
    const { a, connect } = pair();
    connect();
    for (let i = 0; i < 64; i++) a.send(String(i));
    expect(a.unacknowledged).toBe(0);
  });

  it("refuses a message after a gap and an acknowledgement of messages never sent", () => {
    const e = new LinkEndpoint({ onMessage: () => undefined });
    e.attach({ send: () => undefined }, 0);
    e.receive({ t: "m", s: 1, d: "a" });
    e.receive({ t: "m", s: 1, d: "a" });
    expect(() => e.receive({ t: "m", s: 3, d: "c" })).toThrow(LinkProtocolError);
    expect(() => e.receive({ t: "a", s: 1 })).toThrow(LinkProtocolError);
  });

  it("says when too much is unacknowledged", () => {
    let overflow = 0;
    const e = new LinkEndpoint({ onMessage: () => undefined, maxUnacked: 10, onOverflow: () => overflow++ });
    e.send("12345");
    e.send("123456");
    expect(overflow).toBe(1);
  });

  it("parses only link frames", () => {
    expect(decodeFrame('{"t":"hello","link":"l1","resumed":false,"received":0}')).toEqual({ t: "hello", link: "l1", resumed: false, received: 0 });
    expect(() => decodeFrame('{"t":"m","s":0,"d":""}')).toThrow(LinkProtocolError);
    expect(() => decodeFrame("[1]")).toThrow(LinkProtocolError);
  });
});
