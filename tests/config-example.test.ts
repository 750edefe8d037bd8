/**
 * The configuration a new team copies must work: config/gateway.example.json
 * parses with the gateway config schema, and README.md shows the same file.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { loadGatewayConfigFile } from "@byok/platform";

const ROOT = new URL("../", import.meta.url);

describe("config/gateway.example.json", () => {
  it("is a valid gateway configuration with at least one BYOK model whose provider names its key variable", () => {
    const config = loadGatewayConfigFile(new URL("config/gateway.example.json", ROOT).pathname);
    expect(config.models.length).toBeGreaterThan(0);
    for (const model of config.models) expect(config.providers[model.provider]?.apiKeyEnv).toMatch(/^[A-Z_][A-Z0-9_]*$/);
  });

  it("is the example README.md shows", () => {
    const readme = readFileSync(new URL("README.md", ROOT), "utf8");
    const block = /```json\n([\s\S]*?)```/.exec(readme)?.[1];
    expect(block, "README.md has no json block").toBeDefined();
    const example = readFileSync(new URL("config/gateway.example.json", ROOT), "utf8");
    expect(JSON.parse(block!)).toEqual(JSON.parse(example));
  });
});
