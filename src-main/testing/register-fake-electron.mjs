// `node --import ./register-fake-electron.mjs`: resolves `electron` to fake-electron.mjs, so
// the main process (src-main/main.ts) runs in plain Node for tests.
import { register } from "node:module";

register(
  "data:text/javascript," +
    encodeURIComponent(`
      const fake = ${JSON.stringify(new URL("./fake-electron.mjs", import.meta.url).href)};
      export async function resolve(specifier, context, next) {
        return specifier === "electron" ? { url: fake, shortCircuit: true } : next(specifier, context);
      }`),
);
