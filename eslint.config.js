import js from "@eslint/js";
import tseslint from "typescript-eslint";

const SERVICES = ["acp-adapter", "admin", "cursor-adapter", "edge-proxy", "provider-gateway", "run-worker", "store"];
/** Services that never learn the Cursor protocol (the run worker, provider gateway and store learn no client protocol at all). */
const CURSOR_FREE = new Set(["acp-adapter", "run-worker", "provider-gateway", "store"]);
/** Test code inside services and packages: it may start another service through its entry module (e.g. a real store). */
const TEST_CODE = ["**/*.test.ts", "**/test-harness.ts", "**/testing/**", "**/test-support/**"];

const cursorProtocol = {
  group: ["@byok/cursor-protocol", "@byok/cursor-protocol/*"],
  message: "Cursor wire types stay in the cursor adapter and edge proxy.",
};

/**
 * The Agent Client Protocol SDK: only the ACP adapter's ACP types module imports it (and the end-to-end tests that
 * play the editor, tests/acp-*.ts). Every other file of the repository gets this pattern; tests/acp-boundary.test.ts
 * checks the same for package manifests and source text.
 */
const acpSdk = {
  group: ["@agentclientprotocol/sdk", "@agentclientprotocol/sdk/*"],
  message: "ACP stays in services/acp-adapter: import its types from services/acp-adapter/src/acp/acp-types.ts (the only module that imports the SDK).",
};
const ACP_TYPES_MODULE = "services/acp-adapter/src/acp/acp-types.ts";
const ACP_EDITOR_TESTS = ["tests/acp-*.ts"];

/** Another service's source (relative path or package subpath), and with `entry`, its package entry too. */
function otherServices(self, { entry }) {
  const others = SERVICES.filter((s) => s !== self);
  return {
    group: others.flatMap((s) => [`**/${s}/src/**`, `@byok/${s}/*`, ...(entry ? [`@byok/${s}`] : [])]),
    message: "A service does not import another service's code: share it through packages/ (root tests/ and bench/ may import services' entry modules).",
  };
}

function serviceImportRules(service, { entry, acp = false }) {
  return {
    "no-restricted-imports": ["error", { patterns: [...(CURSOR_FREE.has(service) ? [cursorProtocol] : []), ...(acp ? [] : [acpSdk]), otherServices(service, { entry })] }],
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
    // The admin page: plain ES modules run by the browser (no build step).
    files: ["services/admin/src/page/**/*.js"],
    languageOptions: {
      sourceType: "module",
      globals: Object.fromEntries(
        ["window", "document", "location", "fetch", "FormData", "URLSearchParams", "Option", "Node", "Intl", "confirm", "setTimeout", "clearTimeout", "setInterval", "console"].map((name) => [name, "readonly"]),
      ),
    },
  },
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
        { patterns: [acpSdk, { group: ["**/services/**", ...SERVICES.map((s) => `@byok/${s}`), ...SERVICES.map((s) => `@byok/${s}/*`)], message: "Packages do not depend on services." }] },
      ],
    },
  },
  {
    // The shared test kit starts real services through their packages, never by relative path.
    files: ["packages/test-support/**"],
    rules: {
      "no-restricted-imports": ["error", { patterns: [acpSdk, { group: ["**/services/**"], message: "Reach a service through its package (@byok/<service>/...), not its source path." }] }],
    },
  },
  {
    files: TEST_CODE.map((glob) => `packages/${glob}`),
    ignores: ["packages/test-support/**"],
    rules: {
      "no-restricted-imports": [
        "error",
        { patterns: [acpSdk, { group: ["**/services/**", ...SERVICES.map((s) => `@byok/${s}/*`)], message: "Package tests may start a service through its entry module only." }] },
      ],
    },
  },
  {
    files: ["tests/**", "scripts/**", "bench/**"],
    ignores: ACP_EDITOR_TESTS,
    rules: { "no-restricted-imports": ["error", { patterns: [acpSdk] }] },
  },
  // The two places that may import the ACP SDK.
  { files: [ACP_TYPES_MODULE], rules: serviceImportRules("acp-adapter", { entry: true, acp: true }) },
  { files: ACP_EDITOR_TESTS, rules: { "no-restricted-imports": "off" } },
);
