/** Public entry of the run session: the transport calls createRunSessionFactory. */
export type { SessionDeps, SessionTimeouts } from "./deps.ts";
export { createRunSessionFactory } from "./factory.ts";
