import { describe, expect, it } from "vitest";
import { searchSearxng, type FetchLike } from "./searxng.ts";

const CONFIG = { kind: "searxng" as const, url: "http://search.internal:8080/search", maxResults: 2, timeoutMs: 1_000, params: { language: "en" } };

function answering(body: unknown, status = 200): FetchLike & { urls: string[] } {
  const urls: string[] = [];
  const fetchLike: FetchLike = (url) => {
    urls.push(url);
    return Promise.resolve(new Response(typeof body === "string" ? body : JSON.stringify(body), { status }));
  };
  return Object.assign(fetchLike, { urls });
}

describe("searchSearxng", () => {
  it("asks for JSON with the configured parameters and keeps the first distinct hits", async () => {
    const fetchLike = answering({
      results: [
        { url: "https://a.example/", title: "A", content: "first\n  hit" },
        { url: "https://a.example/", title: "A again", content: "dup" },
        { url: "https://b.example/", title: "B", content: "second" },
        { url: "https://c.example/", title: "C", content: "third" },
      ],
    });
    const found = await searchSearxng(CONFIG, "widgets & gadgets", new AbortController().signal, fetchLike);
    expect(fetchLike.urls).toEqual(["http://search.internal:8080/search?language=en&q=widgets+%26+gadgets&format=json"]);
    expect(found).toEqual({ kind: "results", hits: [{ title: "A", url: "https://a.example/", snippet: "first hit" }, { title: "B", url: "https://b.example/", snippet: "second" }] });
  });

  it("says why a backend answer is unusable", async () => {
    const signal = new AbortController().signal;
    expect(await searchSearxng(CONFIG, "x", signal, answering("<html>", 200))).toMatchObject({ kind: "failed", message: expect.stringMatching(/not JSON/) });
    expect(await searchSearxng(CONFIG, "x", signal, answering({}, 502))).toEqual({ kind: "failed", message: "the search backend answered HTTP 502" });
    expect(await searchSearxng(CONFIG, "x", signal, answering({ answers: [] }))).toMatchObject({ kind: "failed", message: expect.stringMatching(/no results list/) });
    const down: FetchLike = () => Promise.reject(new Error("connect ECONNREFUSED"));
    expect(await searchSearxng(CONFIG, "x", signal, down)).toMatchObject({ kind: "failed", message: expect.stringMatching(/cannot be reached/) });
  });
});
