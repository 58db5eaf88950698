// Lint rules: typescript-eslint's type-aware recommended set, the habits in the guide,
// and the import boundaries that keep the layering true (see docs/ARCHITECTURE.md).
import js from "@eslint/js";
import { createTypeScriptImportResolver } from "eslint-import-resolver-typescript";
import importX from "eslint-plugin-import-x";
import reactHooks from "eslint-plugin-react-hooks";
import globals from "globals";
import tseslint from "typescript-eslint";

/** Bottom of the server: shared vocabulary and helpers every layer may use. */
const CORE = ["./domain", "./errors.ts", "./ids.ts"];

/**
 * Who may import whom. Each zone forbids files under `target` to import from `from`,
 * except the listed paths (relative to `from`).
 */
const zones = [
  // The server never reaches into the desktop shell or the UI.
  { target: "./src-server", from: "./src-main", message: "src-server is a library; it knows nothing of Electron." },
  { target: "./src-server", from: "./src-renderer", message: "src-server never imports the UI." },
  // Layers inside the server point downwards only.
  { target: "./src-server/domain", from: "./src-server", except: ["./domain"], message: "domain/ is the bottom layer." },
  { target: "./src-server/store", from: "./src-server", except: ["./store", ...CORE], message: "store/ imports nothing above it." },
  { target: "./src-server/security", from: "./src-server", except: ["./security", "./store", "./contract", ...CORE], message: "security/ wraps storage; it knows no services or HTTP (the contract's types: the audit format it hashes)." },
  { target: "./src-server/models", from: "./src-server", except: ["./models", ...CORE], message: "models/ (the registry) sits below the engine and services." },
  { target: "./src-server/engine", from: "./src-server", except: ["./engine", "./models", ...CORE], message: "engine/ knows models, not services or HTTP." },
  ...["admin", "audit", "inference", "rag", "conversations"].map((service) => ({
    target: `./src-server/${service}`,
    from: "./src-server",
    except: ["./admin", "./audit", "./inference", "./rag", "./conversations", "./engine", "./models", "./store", "./security", ...CORE],
    message: "Services take typed input; they never see HTTP, configuration or the composition root.",
  })),
  { target: "./src-server/contract", from: "./src-server", except: ["./contract"], message: "The API contract stands alone (the renderer imports it)." },
  // The UI is an ordinary HTTP client: the contract's types, nothing else of the server.
  { target: "./src-renderer", from: "./src-server", except: ["./contract"], message: "The renderer may import only the API contract (src-server/contract)." },
  { target: "./src-renderer", from: "./src-main", message: "The renderer talks to the main process only through the preload bridge." },
  // The desktop shell starts the server through its public entry.
  { target: "./src-main", from: "./src-server", except: ["./index.ts", "./contract"], message: "src-main uses the server's public entry (src-server/index.ts) only." },
  { target: "./src-main", from: "./src-renderer", message: "src-main never imports the UI." },
];

export default tseslint.config(
  { ignores: ["dist/**", "node_modules/**", "scripts/test-models/**", "test-results/**", "release/**"] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    plugins: { "import-x": importX },
    settings: {
      "import-x/resolver-next": [createTypeScriptImportResolver({ project: ["tsconfig.json", "src-renderer/tsconfig.json"] })],
    },
    rules: {
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "@typescript-eslint/consistent-type-imports": "error",
      "@typescript-eslint/no-floating-promises": "error",
      "no-restricted-properties": ["error", { object: "process", property: "env", message: "Read configuration in src-server/config.ts only." }],
      "import-x/no-restricted-paths": ["error", { zones }],
      // The MCP SDK publishes its modules through a wildcard export ("./*" with typesVersions) that the
      // import resolver cannot follow; tsc resolves and checks those imports, so a wrong path still fails.
      "import-x/no-unresolved": ["error", { ignore: ["^virtual:", "^@modelcontextprotocol/sdk/"] }],
    },
  },
  {
    // The contract is types only: a value exported from it would drag server code into the UI bundle.
    files: ["src-server/contract/**/*.ts"],
    rules: {
      "no-restricted-syntax": [
        "error",
        { selector: "ExportNamedDeclaration > :matches(VariableDeclaration, FunctionDeclaration, ClassDeclaration, TSEnumDeclaration)", message: "The API contract exports types only." },
        { selector: "ExportDefaultDeclaration", message: "The API contract exports types only." },
      ],
    },
  },
  {
    files: ["src-server/**/*.ts"],
    rules: { "no-restricted-imports": ["error", { paths: [{ name: "electron", message: "src-server runs without Electron (headless, tests, utility process)." }] }] },
  },
  {
    files: ["src-renderer/**/*.{ts,tsx}"],
    languageOptions: { globals: globals.browser },
    plugins: { "react-hooks": reactHooks },
    rules: {
      ...reactHooks.configs.recommended.rules,
      "import-x/no-nodejs-modules": "error",
      "no-restricted-imports": ["error", { paths: [{ name: "electron", message: "The renderer reaches the main process only through window.pustaka (preload)." }] }],
    },
  },
  {
    files: ["src-server/config.ts", "src-server/process-environment.ts", "test/**", "bench/**", "scripts/**", "examples/**", "**/*.test.ts", "**/*.test.tsx", "src-main/main.ts", "src-main/testing/**", "electron.config.ts", "*.config.ts"],
    rules: { "no-restricted-properties": "off" },
  },
  {
    files: ["**/*.test.ts", "**/*.test.tsx", "test/**"],
    rules: {
      "@typescript-eslint/no-unsafe-assignment": "off",
      "@typescript-eslint/no-unsafe-member-access": "off",
      "@typescript-eslint/no-unsafe-argument": "off",
      "@typescript-eslint/no-non-null-assertion": "off",
      "@typescript-eslint/no-explicit-any": "off",
      "@typescript-eslint/no-unsafe-return": "off",
      "@typescript-eslint/no-unsafe-call": "off",
      "@typescript-eslint/require-await": "off",
      // node:test's describe/it return promises the runner tracks itself.
      "@typescript-eslint/no-floating-promises": ["error", { allowForKnownSafeCalls: [{ from: "package", package: "node:test", name: ["describe", "it", "test", "before", "after", "beforeEach", "afterEach"] }] }],
    },
  },
  { files: ["**/*.js", "**/*.mjs"], ...tseslint.configs.disableTypeChecked },
  { files: ["**/*.js", "**/*.mjs"], languageOptions: { globals: globals.node } },
);
