/**
 * LanceDB and apache-arrow, loaded when first used. Together they add about 29 MB to the
 * process (LanceDB's native module and both libraries' JavaScript), which a server that
 * opens no corpus should not carry: they load with the first corpus index.
 *
 * Arrow is the build LanceDB loads. LanceDB is CommonJS and requires apache-arrow's
 * CommonJS build, while an `import` here would load its ES module build: two copies of
 * every class, so Arrow objects LanceDB returns would fail the other copy's `instanceof`
 * checks (a Table made of LanceDB's record batches recursed until the stack overflowed).
 */
import { createRequire } from "node:module";
import type * as Arrow from "apache-arrow";
import type * as LanceDb from "@lancedb/lancedb";

const require = createRequire(import.meta.url);

/** A module's exports, required on the first access to any of them. */
function onFirstUse<T extends object>(id: string): T {
  let loaded: T | undefined;
  return new Proxy({} as T, {
    get: (_, key) => Reflect.get((loaded ??= require(id) as T), key),
    has: (_, key) => Reflect.has((loaded ??= require(id) as T), key),
  });
}

export const arrow = onFirstUse<typeof Arrow>("apache-arrow");
export const lancedb = onFirstUse<typeof LanceDb>("@lancedb/lancedb");
export type { Arrow, LanceDb };
