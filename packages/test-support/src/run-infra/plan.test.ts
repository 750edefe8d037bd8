import { describe, expect, it } from "vitest";
import { describeSource, InfraPlanError, planInfra } from "./plan.ts";

const PG = "postgres://postgres@127.0.0.1:5432/postgres";
const NATS = "nats://127.0.0.1:4222";

/** A container engine probe that records whether it was asked. */
function engine(available: boolean) {
  const probe = { asked: 0, check: async () => (probe.asked++, available) };
  return probe;
}

describe("planInfra", () => {
  it("uses DATABASE_URL and NATS_URL when both are set, without probing for a container engine", async () => {
    const probe = engine(true);
    expect(await planInfra({ DATABASE_URL: PG, NATS_URL: NATS }, probe.check)).toEqual({
      postgres: { kind: "given", url: PG },
      nats: { kind: "given", url: NATS },
    });
    expect(probe.asked).toBe(0);
  });

  it("starts containers for what is not set when a container engine answers", async () => {
    expect(await planInfra({}, engine(true).check)).toEqual({ postgres: { kind: "container" }, nats: { kind: "container" } });
    expect(await planInfra({ NATS_URL: NATS }, engine(true).check)).toEqual({ postgres: { kind: "container" }, nats: { kind: "given", url: NATS } });
  });

  it("falls back to embedded servers without a container engine", async () => {
    expect(await planInfra({}, engine(false).check)).toEqual({ postgres: { kind: "embedded" }, nats: { kind: "embedded" } });
    expect(await planInfra({ DATABASE_URL: PG, NATS_URL: " " }, engine(false).check)).toEqual({ postgres: { kind: "given", url: PG }, nats: { kind: "embedded" } });
  });

  it("lets TEST_INFRA force a source without probing", async () => {
    const probe = engine(true);
    expect(await planInfra({ TEST_INFRA: "embedded" }, probe.check)).toEqual({ postgres: { kind: "embedded" }, nats: { kind: "embedded" } });
    expect(await planInfra({ TEST_INFRA: "containers", DATABASE_URL: PG }, engine(false).check)).toEqual({
      postgres: { kind: "given", url: PG },
      nats: { kind: "container" },
    });
    expect(probe.asked).toBe(0);
    await expect(planInfra({ TEST_INFRA: "docker" }, probe.check)).rejects.toThrow(InfraPlanError);
  });
});

describe("describeSource", () => {
  it("never shows a password", () => {
    const text = describeSource({ kind: "embedded" }, "postgres://postgres:s3cret@127.0.0.1:5555/postgres");
    expect(text).toBe("postgres://postgres:***@127.0.0.1:5555/postgres (embedded)");
    expect(describeSource({ kind: "given", url: NATS }, NATS)).toBe("nats://127.0.0.1:4222 (from the environment)");
  });
});
