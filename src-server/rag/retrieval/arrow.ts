/**
 * apache-arrow as LanceDB loads it. LanceDB is CommonJS and requires apache-arrow's
 * CommonJS build, while an `import` here would load its ES module build: two copies of
 * every class, so Arrow objects LanceDB returns would fail the other copy's `instanceof`
 * checks (a Table made of LanceDB's record batches recursed until the stack overflowed).
 * Loading the same build makes them one.
 */
import { createRequire } from "node:module";
import type * as Arrow from "apache-arrow";

export const arrow = createRequire(import.meta.url)("apache-arrow") as typeof Arrow;
export type { Arrow };
