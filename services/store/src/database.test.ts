/**
 * How errors from pg and the socket below it are classified: everything that
 * means "the database cannot be reached right now" must be `unavailable` (the
 * bus answers UNAVAILABLE and callers may retry), never `unknown`.
 */
import { describe, expect, it } from "vitest";
import { DatabaseFailure, toDatabaseFailure } from "./database.ts";

function withCode(message: string, code: string): Error {
  return Object.assign(new Error(message), { code });
}

describe("toDatabaseFailure", () => {
  it.each([
    ["connect ECONNREFUSED 127.0.0.1:5432", "ECONNREFUSED"],
    ["read ECONNRESET", "ECONNRESET"],
    ["connect ETIMEDOUT 10.0.0.1:5432", "ETIMEDOUT"],
    ["write EPIPE", "EPIPE"],
    ["terminating connection due to administrator command", "57P01"],
    ["the database system is shutting down", "57P03"],
    ["connection failure", "08006"],
    ["sorry, too many clients already", "53300"],
  ])("maps %s (%s) to unavailable", (message, code) => {
    const failure = toDatabaseFailure(withCode(message, code));
    expect(failure).toBeInstanceOf(DatabaseFailure);
    expect(failure.kind).toBe("unavailable");
    expect(failure.code).toBe(code);
    expect(failure.message).toBe(message);
  });

  it("maps a connection lost without a code to unavailable", () => {
    expect(toDatabaseFailure(new Error("Connection terminated unexpectedly")).kind).toBe("unavailable");
  });

  it("keeps conflicts, constraint violations and other server errors apart", () => {
    expect(toDatabaseFailure(withCode("could not serialize access", "40001")).kind).toBe("conflict");
    expect(toDatabaseFailure(withCode("duplicate key value", "23505")).kind).toBe("constraint");
    expect(toDatabaseFailure(withCode("canceling statement due to statement timeout", "57014")).kind).toBe("unknown");
    expect(toDatabaseFailure(withCode("syntax error", "42601")).kind).toBe("unknown");
  });
});
