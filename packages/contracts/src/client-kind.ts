/**
 * Who made a model call, as the ledger and the metrics name it: a run from
 * one of the client adapters (Cursor, ACP editors), or a request to the
 * HTTP front by the API it speaks. One list for the provider gateway, the
 * store's ledger check and the admin views.
 */
import { RunClientKind } from "./gen/byok/v1/model_pb.js";

export const CLIENT_KINDS = ["cursor", "acp", "openai-api", "anthropic-api"] as const;

export type ClientKind = (typeof CLIENT_KINDS)[number];

export function isClientKind(value: string): value is ClientKind {
  return (CLIENT_KINDS as readonly string[]).includes(value);
}

/** The ledger name of a run's client kind; unspecified is Cursor (runs from before the field existed). */
export function runClientKindName(kind: RunClientKind): ClientKind {
  switch (kind) {
    case RunClientKind.ACP:
      return "acp";
    case RunClientKind.CURSOR:
    case RunClientKind.UNSPECIFIED:
      return "cursor";
    default:
      return "cursor";
  }
}
