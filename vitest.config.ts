/**
 * Two test tiers (see README "Tests"):
 * - unit: `*.test.ts` beside the code; no NATS, no Postgres (the project points
 *   NATS_URL / DATABASE_URL at closed ports, so a test that needs them fails
 *   at once instead of quietly using a local server). `npm run test:unit`.
 *   Test files share their worker's module cache (isolate: false): importing
 *   the generated protobuf code and SDKs once per worker instead of once per
 *   file makes the tier about 4x cheaper. A unit test therefore leaves no
 *   global state behind (fake timers restored, no env or module mocks).
 * - integration: `*.int.test.ts` beside the code (real NATS / Postgres) and the
 *   end-to-end tests in tests/. Their NATS and Postgres come from one global
 *   setup per run (DATABASE_URL / NATS_URL when set, else containers, else
 *   embedded servers). `npm run test:integration`.
 * `vitest run` (what `npm test` runs after the checks) runs both.
 */
import { defineConfig } from "vitest/config";

const UNREACHABLE = {
  DATABASE_URL: "postgres://unit-tests-have-no-database@127.0.0.1:9/none",
  NATS_URL: "nats://127.0.0.1:9",
};

export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: "forks",
    maxWorkers: 2,
    projects: [
      {
        extends: true,
        test: {
          name: "unit",
          isolate: false,
          include: ["packages/*/src/**/*.test.ts", "services/*/src/**/*.test.ts"],
          exclude: ["**/*.int.test.ts", "**/node_modules/**"],
          env: UNREACHABLE,
        },
      },
      {
        extends: true,
        test: {
          name: "integration",
          include: ["packages/*/src/**/*.int.test.ts", "services/*/src/**/*.int.test.ts", "tests/**/*.test.ts"],
          exclude: ["**/node_modules/**"],
          globalSetup: ["packages/test-support/src/run-infra/global-setup.ts"],
          setupFiles: ["packages/test-support/src/run-infra/worker-setup.ts"],
        },
      },
    ],
  },
});
