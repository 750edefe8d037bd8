/**
 * Our wire error codes as connect-es errors. connect-node turns a thrown
 * ConnectError into the unary error body or the streaming EndStream JSON, so
 * this is the one place that shapes Cursor-visible errors.
 */
import { toBinary } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { aiserver } from "@byok/cursor-protocol";
import type { ConnectCode } from "../transport/session-port.ts";

const CODES: Record<ConnectCode, Code> = {
  canceled: Code.Canceled,
  unknown: Code.Unknown,
  invalid_argument: Code.InvalidArgument,
  deadline_exceeded: Code.DeadlineExceeded,
  not_found: Code.NotFound,
  permission_denied: Code.PermissionDenied,
  resource_exhausted: Code.ResourceExhausted,
  failed_precondition: Code.FailedPrecondition,
  aborted: Code.Aborted,
  unavailable: Code.Unavailable,
  internal: Code.Internal,
  unauthenticated: Code.Unauthenticated,
};

/**
 * A ConnectError carrying `details` as one `aiserver.v1.ErrorDetails` entry.
 * The detail is attached as raw bytes so the JSON holds exactly
 * `{"type":"aiserver.v1.ErrorDetails","value":"<base64>"}` (connect-es would
 * otherwise add a "debug" copy of the message).
 */
export function connectError(code: ConnectCode, message: string, details?: aiserver.ErrorDetails): ConnectError {
  const error = new ConnectError(message, CODES[code]);
  if (details) {
    error.details.push({ type: aiserver.ErrorDetailsSchema.typeName, value: toBinary(aiserver.ErrorDetailsSchema, details) });
  }
  return error;
}
