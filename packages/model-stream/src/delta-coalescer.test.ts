import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ManualClock } from "@byok/test-support/manual-clock";
import { blockDeltaRule, DeltaCoalescer } from "./delta-coalescer.ts";
import { DeltaWindow } from "./delta-window.ts";

type Ev = { case: string; value: { index?: number; text?: string; callId?: string } };

const text = (t: string, index = 0): Ev => ({ case: "textDelta", value: { index, text: t } });
const thinking = (t: string, index = 0): Ev => ({ case: "thinkingDelta", value: { index, text: t } });
const other = (c: string, index = 0): Ev => ({ case: c, value: { index } });

function setup(windowMs = 4) {
  const clock = new ManualClock();
  const sent: Ev[] = [];
  const coalescer = new DeltaCoalescer<Ev>((e) => sent.push(e), blockDeltaRule<Ev>(), new DeltaWindow(clock, windowMs));
  return { clock, sent, coalescer };
}

describe("DeltaCoalescer", () => {
  it("sends the first delta at once and joins the rest of a burst into one delta when the window ends", async () => {
    const { clock, sent, coalescer } = setup();
    for (let i = 0; i < 50; i++) coalescer.push(text(`w${i} `));
    expect(sent).toEqual([text("w0 ")]);
    await clock.advance(3);
    expect(sent).toHaveLength(1);
    await clock.advance(1);
    expect(sent).toEqual([text("w0 "), text(Array.from({ length: 49 }, (_, i) => `w${i + 1} `).join(""))]);
    // The window reopened for what the last one held; with nothing more it closes and the next delta goes at once.
    await clock.advance(4);
    expect(clock.pendingDelays()).toEqual([]);
    coalescer.push(text("later"));
    expect(sent.at(-1)).toEqual(text("later"));
  });

  it("never delays a delta that arrives while no window is open (a paced stream passes through one by one)", async () => {
    const { clock, sent, coalescer } = setup(4);
    for (let i = 0; i < 5; i++) {
      coalescer.push(text(`t${i}`));
      expect(sent).toHaveLength(i + 1);
      await clock.advance(33);
    }
    expect(sent.map((e) => e.value.text)).toEqual(["t0", "t1", "t2", "t3", "t4"]);
  });

  it("sends what is pending before any other event, in order, and the next delta after it goes at once", async () => {
    const { sent, coalescer } = setup();
    coalescer.push(text("a"));
    coalescer.push(text("b"));
    coalescer.push(text("c"));
    coalescer.push(other("textEnd"));
    coalescer.push(other("toolCallStart", 1));
    coalescer.push({ case: "toolCallArgsDelta", value: { index: 1, text: "{" } });
    coalescer.push({ case: "toolCallArgsDelta", value: { index: 1, text: "}" } });
    coalescer.push(text("d", 2));
    expect(sent).toEqual([
      text("a"),
      text("bc"),
      other("textEnd"),
      other("toolCallStart", 1),
      { case: "toolCallArgsDelta", value: { index: 1, text: "{" } },
      { case: "toolCallArgsDelta", value: { index: 1, text: "}" } },
      text("d", 2),
    ]);
  });

  it("never joins across kinds or block indexes", async () => {
    const { clock, sent, coalescer } = setup();
    coalescer.push(thinking("x"));
    coalescer.push(thinking("y"));
    coalescer.push(text("a"));
    coalescer.push(text("b"));
    coalescer.push(text("c", 1));
    coalescer.push(text("d", 1));
    await clock.advance(4);
    expect(sent).toEqual([thinking("x"), thinking("y"), text("a"), text("b"), text("c", 1), text("d", 1)]);
    // The window reopened after "d": the next two of that block travel together.
    coalescer.push(text("e", 1));
    coalescer.push(text("f", 1));
    await clock.advance(4);
    expect(sent.slice(6)).toEqual([text("ef", 1)]);
  });

  it("flush() sends the pending delta now and the next delta goes at once", () => {
    const { sent, coalescer } = setup();
    coalescer.push(text("a"));
    coalescer.push(text("b"));
    expect(coalescer.holding).toBe(true);
    coalescer.flush();
    expect(sent).toEqual([text("a"), text("b")]);
    expect(coalescer.holding).toBe(false);
    coalescer.push(text("c"));
    expect(sent.at(-1)).toEqual(text("c"));
  });

  it("with a window of 0 sends every event as it comes", () => {
    const { clock, sent, coalescer } = setup(0);
    coalescer.push(text("a"));
    coalescer.push(text("b"));
    expect(sent).toEqual([text("a"), text("b")]);
    expect(clock.timersSet).toBe(0);
  });

  describe("sharing one window (every call of a process)", () => {
    function streams(n: number) {
      const clock = new ManualClock();
      const window = new DeltaWindow(clock, 4);
      const sent: Array<{ stream: number; text: string | undefined }> = [];
      const coalescers = Array.from({ length: n }, (_, stream) => new DeltaCoalescer<Ev>((e) => sent.push({ stream, text: e.value.text }), blockDeltaRule<Ev>(), window));
      return { clock, sent, coalescers };
    }

    it("holds a later delta of one stream for the window another stream opened, and releases every held delta together", async () => {
      const { clock, sent, coalescers } = streams(3);
      const [a, b, c] = coalescers as [DeltaCoalescer<Ev>, DeltaCoalescer<Ev>, DeltaCoalescer<Ev>];
      // Each stream's first delta goes at once, whoever opened the window.
      a.push(text("a0"));
      await clock.advance(1);
      b.push(text("b0"));
      c.push(text("c0"));
      expect(sent.map((s) => s.text)).toEqual(["a0", "b0", "c0"]);
      // Their next deltas (a paced stream's second token) wait for the end of a's window, then go in one callback.
      await clock.advance(1);
      b.push(text("b1"));
      a.push(text("a1"));
      c.push(text("c1"));
      expect(sent).toHaveLength(3);
      await clock.advance(1);
      expect(sent).toHaveLength(3);
      await clock.advance(1);
      expect(sent.slice(3).map((s) => s.text).sort()).toEqual(["a1", "b1", "c1"]);
      // The window reopened for what it released; empty at its end, it closes and the next delta goes at once.
      await clock.advance(4);
      expect(clock.pendingDelays()).toEqual([]);
      c.push(text("c2"));
      expect(sent.at(-1)).toEqual({ stream: 2, text: "c2" });
    });

    it("lets a stream's own event send its held delta early without releasing the others'", async () => {
      const { clock, sent, coalescers } = streams(2);
      const [a, b] = coalescers as [DeltaCoalescer<Ev>, DeltaCoalescer<Ev>];
      a.push(text("a0"));
      b.push(text("b0"));
      a.push(text("a1"));
      b.push(text("b1"));
      b.push(other("textEnd"));
      expect(sent.map((s) => s.text)).toEqual(["a0", "b0", "b1", undefined]);
      expect(a.holding).toBe(true);
      await clock.advance(4);
      expect(sent.map((s) => s.text)).toEqual(["a0", "b0", "b1", undefined, "a1"]);
      // b flushed: nothing of b comes out of the window twice.
      await clock.advance(8);
      expect(sent).toHaveLength(5);
    });
  });
  it("whatever the streams, events and timing: nothing reordered, lost or joined across blocks, and no delta held past its window (property)", async () => {
    const WINDOW_MS = 4;
    type Step = { stream: number; kind: "text" | "thinking" | "other" | "flush" | "wait"; index: number; ms: number };
    const step = fc.record({
      stream: fc.integer({ min: 0, max: 2 }),
      kind: fc.constantFrom<Step["kind"]>("text", "text", "text", "thinking", "other", "flush", "wait"),
      index: fc.integer({ min: 0, max: 1 }),
      ms: fc.integer({ min: 0, max: 6 }),
    });
    /** Adjacent deltas of the same kind and block as one: what joining may change and nothing else. */
    const joined = (events: readonly Ev[]): string[] => {
      const out: Array<{ key: string; text: string }> = [];
      for (const e of events) {
        const key = e.case === "textDelta" || e.case === "thinkingDelta" ? `${e.case}:${e.value.index}` : `${e.case}:${e.value.index}:${out.length}`;
        const last = out.at(-1);
        if (last !== undefined && last.key === key) last.text += e.value.text ?? "";
        else out.push({ key, text: e.value.text ?? "" });
      }
      return out.map((e) => `${e.key.split(":").slice(0, 2).join(":")}=${e.text}`);
    };
    await fc.assert(
      fc.asyncProperty(fc.array(step, { maxLength: 40 }), async (steps) => {
        const clock = new ManualClock();
        const window = new DeltaWindow(clock, WINDOW_MS);
        const pushed: Ev[][] = [[], [], []];
        const sent: Ev[][] = [[], [], []];
        /** When each stream's oldest held delta was pushed (undefined: it holds nothing). */
        const heldSince: Array<number | undefined> = [undefined, undefined, undefined];
        const coalescers = [0, 1, 2].map(
          (stream) =>
            new DeltaCoalescer<Ev>(
              (e) => {
                const since = heldSince[stream];
                if (since !== undefined) expect(clock.now() - since).toBeLessThanOrEqual(WINDOW_MS);
                heldSince[stream] = undefined;
                sent[stream]!.push(e);
              },
              blockDeltaRule<Ev>(),
              window,
            ),
        );
        let n = 0;
        for (const { stream, kind, index, ms } of steps) {
          const coalescer = coalescers[stream]!;
          if (kind === "wait") {
            await clock.advance(ms);
            continue;
          }
          if (kind === "flush") {
            coalescer.flush();
            continue;
          }
          const event = kind === "text" ? text(`t${n++}`, index) : kind === "thinking" ? thinking(`r${n++}`, index) : other("textEnd", index);
          pushed[stream]!.push(event);
          const before = sent[stream]!.length;
          coalescer.push(event);
          if (coalescer.holding) heldSince[stream] ??= clock.now();
          // A delta that is not held went out in this call, with what it follows.
          if (!coalescer.holding) expect(sent[stream]!.length).toBeGreaterThan(before);
        }
        await clock.advance(WINDOW_MS * 3);
        for (const stream of [0, 1, 2]) {
          expect(coalescers[stream]!.holding).toBe(false);
          expect(joined(sent[stream]!)).toEqual(joined(pushed[stream]!));
        }
      }),
      { numRuns: 2000 },
    );
  });
});
