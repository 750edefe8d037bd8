/**
 * Setup file of the integration project, run in each test worker before its
 * test file: the run's Postgres and NATS (from global-setup.ts) become
 * DATABASE_URL / NATS_URL, which infra.ts, the harness and the child
 * processes tests start (npm start, run workers) read.
 */
import { inject } from "vitest";
import "./provided.ts";

process.env["DATABASE_URL"] = inject("databaseUrl");
process.env["NATS_URL"] = inject("natsUrl");
