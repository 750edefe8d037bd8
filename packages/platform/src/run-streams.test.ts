import { describe, expect, it } from "vitest";
import { busNames } from "@byok/contracts";
import { runStreamsEnvSchema } from "./config.ts";
import { runStreamConfigs } from "./run-streams.ts";
import { autoStreamReplicas } from "./stream-replicas.ts";

describe("run stream replicas", () => {
  it("are 3 on a cluster of three or more servers, else 1", () => {
    expect(autoStreamReplicas(undefined)).toBe(1);
    expect(autoStreamReplicas({ connect_urls: ["a:4222", "b:4222", "c:4222"] })).toBe(1);
    expect(autoStreamReplicas({ cluster: "c", connect_urls: ["a:4222", "b:4222"] })).toBe(1);
    expect(autoStreamReplicas({ cluster: "c", connect_urls: ["a:4222", "b:4222", "c:4222"] })).toBe(3);
    expect(autoStreamReplicas({ cluster: "c", connect_urls: ["a", "b", "c", "d", "e"] })).toBe(3);
  });

  it("go into both stream definitions, and JETSTREAM_REPLICAS takes only 1 or 3", () => {
    expect(runStreamConfigs(busNames("t"), 3).map((c) => c.num_replicas)).toEqual([3, 3, 3, 3]);
    expect(runStreamsEnvSchema.parse({}).JETSTREAM_REPLICAS).toBeUndefined();
    expect(runStreamsEnvSchema.parse({ JETSTREAM_REPLICAS: "3" }).JETSTREAM_REPLICAS).toBe(3);
    expect(runStreamsEnvSchema.safeParse({ JETSTREAM_REPLICAS: "2" }).success).toBe(false);
  });
});
