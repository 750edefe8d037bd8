import { describe, expect, it } from "vitest";
import { SentHistories } from "./sent-histories.ts";

const history = (revisionId: string, ...messageIds: string[]) => ({ revisionId, messageIds });

describe("SentHistories", () => {
  it("names the history sent last as the base of a request that continues it", () => {
    const sent = new SentHistories();
    expect(sent.baseFor("c", history("r2", "a", "b"))).toBeUndefined();
    sent.sent("c", history("r2", "a", "b"));
    expect(sent.baseFor("c", history("r4", "a", "b", "c", "d"))).toMatchObject({ revisionId: "r2", messageCount: 2 });
    // The same history again (a retried call) continues it with nothing new.
    expect(sent.baseFor("c", history("r2", "a", "b"))).toMatchObject({ revisionId: "r2", messageCount: 2 });
  });

  it("sends whole a history that does not continue the one sent (compacted, rolled back, forked), and after forget", () => {
    const sent = new SentHistories();
    sent.sent("c", history("r3", "a", "b", "c"));
    expect(sent.baseFor("c", history("s1", "summary", "c"))).toBeUndefined();
    expect(sent.baseFor("c", history("r2", "a", "b"))).toBeUndefined();
    expect(sent.baseFor("c", history("f4", "a", "x", "c", "d"))).toBeUndefined();
    expect(sent.baseFor("other", history("r4", "a", "b", "c", "d"))).toBeUndefined();
    sent.forget("c");
    expect(sent.baseFor("c", history("r4", "a", "b", "c", "d"))).toBeUndefined();
  });

  it("keeps at most its bound of conversations, least recently used out first", () => {
    const sent = new SentHistories(2);
    sent.sent("a", history("ra", "1"));
    sent.sent("b", history("rb", "1"));
    sent.sent("c", history("rc", "1"));
    expect(sent.baseFor("a", history("ra2", "1", "2"))).toBeUndefined();
    expect(sent.baseFor("c", history("rc2", "1", "2"))).toMatchObject({ revisionId: "rc" });
  });
});
