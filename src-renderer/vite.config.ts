/**
 * The workbench's build (`npm run build:renderer`), dev server (`npm run dev:renderer`)
 * and unit tests (`npm run test:renderer`). Run with `src-renderer` as the root.
 *
 * Dev: the API runs separately (`npm run dev -- --port 7780`); /v1 and /healthz are
 * proxied to it. Set PUSTAKA_API to point elsewhere.
 */
import react from "@vitejs/plugin-react";
import { defineConfig } from "vitest/config";

// The proxy strips Origin so the server's same-origin check sees the proxied request as its own.
const api = (globalThis as { process?: { env: Record<string, string | undefined> } }).process?.env.PUSTAKA_API ?? "http://127.0.0.1:7780";
const proxied = {
  target: api,
  changeOrigin: true,
  configure: (proxy: { on(event: "proxyReq", cb: (req: { removeHeader: (name: string) => void }) => void): void }) => {
    proxy.on("proxyReq", (req) => req.removeHeader("origin"));
  },
};

export default defineConfig({
  base: "/",
  plugins: [react()],
  build: {
    outDir: "../dist/renderer",
    emptyOutDir: true,
    target: "es2022",
    chunkSizeWarningLimit: 1200,
  },
  server: {
    port: 5173,
    strictPort: true,
    proxy: { "/v1": proxied, "/healthz": proxied },
  },
  test: {
    environment: "jsdom",
    include: ["**/*.test.{ts,tsx}"],
    setupFiles: ["./test-setup.ts"],
    restoreMocks: true,
  },
});
