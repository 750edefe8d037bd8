/**
 * Where a test run's Postgres and NATS come from, decided once per run (by
 * the integration project's global setup), each on its own:
 *
 * 1. DATABASE_URL / NATS_URL when set: the machine's (or CI's) servers.
 * 2. otherwise, when a container engine answers (Docker or a compatible
 *    socket, as testcontainers finds it): a throwaway container.
 * 3. otherwise: embedded Postgres and `nats-server` from PATH, as `npm start`
 *    runs them (@byok/local-infra), in a temporary directory.
 *
 * TEST_INFRA=containers or TEST_INFRA=embedded skips the engine probe and
 * forces that source for whatever DATABASE_URL / NATS_URL leave open.
 */

export type ServerSource = { readonly kind: "given"; readonly url: string } | { readonly kind: "container" } | { readonly kind: "embedded" };

export interface InfraPlan {
  readonly postgres: ServerSource;
  readonly nats: ServerSource;
}

export type Env = Readonly<Record<string, string | undefined>>;

export class InfraPlanError extends Error {
  override readonly name = "InfraPlanError";
}

/** `containerEngine` is asked only when a server is missing and TEST_INFRA does not decide. */
export async function planInfra(env: Env, containerEngine: () => Promise<boolean>): Promise<InfraPlan> {
  const given = (url: string | undefined): ServerSource | undefined => (url !== undefined && url.trim() !== "" ? { kind: "given", url: url.trim() } : undefined);
  const postgres = given(env["DATABASE_URL"]);
  const nats = given(env["NATS_URL"]);
  if (postgres !== undefined && nats !== undefined) return { postgres, nats };

  const forced = env["TEST_INFRA"]?.trim() ?? "";
  let fallback: ServerSource;
  switch (forced) {
    case "containers":
      fallback = { kind: "container" };
      break;
    case "embedded":
      fallback = { kind: "embedded" };
      break;
    case "":
    case "auto":
      fallback = (await containerEngine()) ? { kind: "container" } : { kind: "embedded" };
      break;
    default:
      throw new InfraPlanError(`TEST_INFRA must be auto, containers or embedded (got ${JSON.stringify(forced)})`);
  }
  return { postgres: postgres ?? fallback, nats: nats ?? fallback };
}

/** "given postgres://postgres@127.0.0.1:5432/postgres" etc., with any password masked. */
export function describeSource(source: ServerSource, url: string): string {
  const shown = new URL(url);
  if (shown.password !== "") shown.password = "***";
  const where = shown.toString();
  switch (source.kind) {
    case "given":
      return `${where} (from the environment)`;
    case "container":
      return `${where} (a container)`;
    case "embedded":
      return `${where} (embedded)`;
  }
}
