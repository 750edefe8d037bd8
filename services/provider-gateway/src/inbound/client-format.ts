/**
 * The API a client of the HTTP front speaks. The names are the provider
 * kinds, so "same shape" is `format === route.kind`: the request can go
 * upstream with the minimal change and the stream can be relayed as it is.
 */
import type { ProviderKind } from "@byok/platform";
import type { ClientKind } from "../accounting/call-accounting.ts";

export type ClientFormat = ProviderKind;

/** The client kind the ledger records for a format. */
export function clientKindOf(format: ClientFormat): ClientKind {
  return format === "anthropic" ? "anthropic-api" : "openai-api";
}
