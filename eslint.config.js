import js from "@eslint/js";
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["**/node_modules/**", "**/gen/**", ".data/**", "coverage/**"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "no-restricted-properties": ["error", { object: "process", property: "env", message: "Read configuration in main.ts and pass it through loadConfig(env)." }],
    },
  },
  {
    files: ["**/src/main.ts", "packages/local-infra/src/embedded-postgres-main.ts", "scripts/**", "tests/**", "bench/**", "packages/test-support/**", "vitest.config.ts", "**/*.test.ts"],
    rules: { "no-restricted-properties": "off" },
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
    files: ["services/run-worker/**", "services/provider-gateway/**", "services/store/**"],
    rules: {
      "no-restricted-imports": ["error", { patterns: [{ group: ["@byok/cursor-protocol", "@byok/cursor-protocol/*"], message: "Cursor wire types stay in the cursor adapter and edge proxy." }] }],
    },
  },
);
