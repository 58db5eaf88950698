// Lint rules: typescript-eslint's type-aware recommended set, plus the habits in the guide.
import js from "@eslint/js";
import globals from "globals";
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["dist/**", "node_modules/**", "src-renderer/dist/**", "scripts/test-models/**"] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "@typescript-eslint/consistent-type-imports": "error",
      "@typescript-eslint/no-floating-promises": "error",
      "no-restricted-properties": ["error", { object: "process", property: "env", message: "Read configuration in src-server/config.ts only." }],
    },
  },
  {
    files: ["src-server/config.ts", "test/**", "bench/**", "scripts/**", "**/*.test.ts"],
    rules: { "no-restricted-properties": "off" },
  },
  {
    files: ["**/*.test.ts", "test/**"],
    rules: {
      "@typescript-eslint/no-unsafe-assignment": "off",
      "@typescript-eslint/no-unsafe-member-access": "off",
      "@typescript-eslint/no-unsafe-argument": "off",
      "@typescript-eslint/no-non-null-assertion": "off",
    },
  },
  { files: ["**/*.js", "**/*.mjs"], ...tseslint.configs.disableTypeChecked },
  { files: ["**/*.js", "**/*.mjs"], languageOptions: { globals: globals.node } },
);
