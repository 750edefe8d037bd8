import js from "@eslint/js";
import tseslint from "typescript-eslint";

const SERVICES = ["admin", "cursor-adapter", "edge-proxy", "provider-gateway", "run-worker", "store"];
/** Services that never learn a client protocol. */
const CURSOR_FREE = new Set(["run-worker", "provider-gateway", "store"]);
/** Test code inside services and packages: it may start another service through its entry module (e.g. a real store). */
const TEST_CODE = ["**/*.test.ts", "**/test-harness.ts", "**/testing/**", "**/test-support/**"];

const cursorProtocol = {
  group: ["@byok/cursor-protocol", "@byok/cursor-protocol/*"],
  message: "Cursor wire types stay in the cursor adapter and edge proxy.",
};

/** Another service's source (relative path or package subpath), and with `entry`, its package entry too. */
function otherServices(self, { entry }) {
  const others = SERVICES.filter((s) => s !== self);
  return {
    group: others.flatMap((s) => [`**/${s}/src/**`, `@byok/${s}/*`, ...(entry ? [`@byok/${s}`] : [])]),
    message: "A service does not import another service's code: share it through packages/ (root tests/ and bench/ may import services' entry modules).",
  };
}

function serviceImportRules(service, { entry }) {
  return {
    "no-restricted-imports": ["error", { patterns: [...(CURSOR_FREE.has(service) ? [cursorProtocol] : []), otherServices(service, { entry })] }],
  };
}

export default tseslint.config(
  { ignores: ["**/node_modules/**", "**/gen/**", ".data/**", ".tmp/**", "coverage/**"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "no-restricted-properties": ["error", { object: "process", property: "env", message: "Read configuration in main.ts and pass it through loadConfig(env)." }],
      "no-restricted-syntax": [
        "error",
        {
          // Generated protobuf modules (under gen/) may be re-exported whole: they are too many names to list and change with every .proto edit.
          selector: "ExportAllDeclaration[source.value!=/\\/gen\\//]",
          message: "Named exports only: list what the module re-exports (`export *` only re-exports generated code under gen/).",
        },
      ],
    },
  },
  {
    files: ["**/src/main.ts", "services/*/src/cli/**/main.ts", "packages/local-infra/src/embedded-postgres-main.ts", "scripts/**", "tests/**", "bench/**", "packages/test-support/**", "vitest.config.ts", "**/*.test.ts"],
    rules: { "no-restricted-properties": "off" },
  },
  ...SERVICES.flatMap((service) => [
    { files: [`services/${service}/**`], rules: serviceImportRules(service, { entry: true }) },
    { files: TEST_CODE.map((glob) => `services/${service}/${glob}`), rules: serviceImportRules(service, { entry: false }) },
  ]),
  {
    // Tests never sleep for a fixed time: they wait on the condition or advance a fake clock
    // (ManualClock from @byok/test-support, or vi.useFakeTimers()).
    files: ["**/*.test.ts"],
    rules: {
      "no-restricted-syntax": [
        "warn",
        {
          selector: "NewExpression[callee.name='Promise'] CallExpression[callee.name='setTimeout'][arguments.0.type='Identifier']",
          message: "A fixed sleep in a test: wait on the condition (waitFor) or advance a fake clock instead.",
        },
        {
          selector: "ImportDeclaration[source.value=/^(node:)?timers\\u002Fpromises$/]",
          message: "A fixed sleep in a test: wait on the condition (waitFor) or advance a fake clock instead.",
        },
      ],
    },
  },
  {
    files: ["packages/**"],
    ignores: ["packages/test-support/**"],
    rules: {
      "no-restricted-imports": [
        "error",
        { patterns: [{ group: ["**/services/**", ...SERVICES.map((s) => `@byok/${s}`), ...SERVICES.map((s) => `@byok/${s}/*`)], message: "Packages do not depend on services." }] },
      ],
    },
  },
  {
    // The shared test kit starts real services through their packages, never by relative path.
    files: ["packages/test-support/**"],
    rules: {
      "no-restricted-imports": ["error", { patterns: [{ group: ["**/services/**"], message: "Reach a service through its package (@byok/<service>/...), not its source path." }] }],
    },
  },
  {
    files: TEST_CODE.map((glob) => `packages/${glob}`),
    ignores: ["packages/test-support/**"],
    rules: {
      "no-restricted-imports": [
        "error",
        { patterns: [{ group: ["**/services/**", ...SERVICES.map((s) => `@byok/${s}/*`)], message: "Package tests may start a service through its entry module only." }] },
      ],
    },
  },
);
