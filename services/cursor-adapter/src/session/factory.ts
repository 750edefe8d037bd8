/**
 * RunSessionFactory: validates a run_request (check) and opens one RunSession
 * per Cursor request id (open).
 */
import type { RunSessionFactory } from "../transport/session-port.ts";
import type { SessionDeps } from "./deps.ts";
import { checkRunRequest } from "../request/check-run-request.ts";
import { openRunSession } from "./run-session.ts";
import { createSessionServices } from "./session-services.ts";

export function createRunSessionFactory(deps: SessionDeps): RunSessionFactory {
  const services = createSessionServices(deps);
  return {
    check: (runRequest) => checkRunRequest(runRequest),
    open: (context) => openRunSession(services, context),
  };
}
