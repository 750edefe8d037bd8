/**
 * Vitest global setup of the integration project: once per test run, the
 * Postgres and NATS every integration test uses (plan.ts decides where they
 * come from), provided to the test workers as `databaseUrl` / `natsUrl`
 * (worker-setup.ts puts them into DATABASE_URL / NATS_URL there). Servers
 * started here are stopped when the run ends.
 */
import type { TestProject } from "vitest/node";
import { containerEngineAvailable, startNatsContainer, startPostgresContainer, type RunningServer } from "./containers.ts";
import { embeddedRoot, startEmbeddedNats, startEmbeddedPostgres, type EmbeddedRoot } from "./embedded.ts";
import { describeSource, planInfra, type ServerSource } from "./plan.ts";
import "./provided.ts";

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const plan = await planInfra(process.env, containerEngineAvailable);
  const cleanups: Array<() => Promise<void>> = [];
  const teardown = async (): Promise<void> => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch((err: unknown) => console.error(`test infrastructure: cleanup failed: ${String(err)}`));
  };

  let root: EmbeddedRoot | undefined;
  const start = async (source: ServerSource, container: () => Promise<RunningServer>, embedded: (root: EmbeddedRoot) => Promise<RunningServer>): Promise<string> => {
    switch (source.kind) {
      case "given":
        return source.url;
      case "container": {
        const server = await container();
        cleanups.push(() => server.stop());
        return server.url;
      }
      case "embedded": {
        if (root === undefined) {
          const created = await embeddedRoot();
          cleanups.push(() => created.remove());
          root = created;
        }
        const server = await embedded(root);
        cleanups.push(() => server.stop());
        return server.url;
      }
    }
  };

  const startOrExplain = async (what: string, ...args: Parameters<typeof start>): Promise<string> => {
    try {
      return await start(...args);
    } catch (cause) {
      const how = args[0].kind === "container" ? "in a container" : "embedded";
      throw new Error(
        `test infrastructure: cannot start ${what} ${how} (set DATABASE_URL / NATS_URL to use running servers, or TEST_INFRA): ${(cause as Error).message}`,
        { cause },
      );
    }
  };

  try {
    const natsUrl = await startOrExplain("NATS", plan.nats, startNatsContainer, (r) => startEmbeddedNats(r, process.env));
    const databaseUrl = await startOrExplain("Postgres", plan.postgres, startPostgresContainer, (r) => startEmbeddedPostgres(r, process.env));
    console.error(`test infrastructure: Postgres ${describeSource(plan.postgres, databaseUrl)}, NATS ${describeSource(plan.nats, natsUrl)}`);
    project.provide("databaseUrl", databaseUrl);
    project.provide("natsUrl", natsUrl);
  } catch (err) {
    await teardown();
    throw err;
  }
  return teardown;
}
