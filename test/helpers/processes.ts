/** Processes a test started, found through /proc (Linux). */
import { readdirSync, readFileSync } from "node:fs";

/** Every process below `pid`. */
export function descendants(pid: number): number[] {
  const out: number[] = [];
  let children: number[] = [];
  try {
    for (const task of readdirSync(`/proc/${pid}/task`)) {
      children.push(...readFileSync(`/proc/${pid}/task/${task}/children`, "utf8").trim().split(/\s+/).filter(Boolean).map(Number));
    }
  } catch {
    children = [];
  }
  for (const child of children) out.push(child, ...descendants(child));
  return out;
}

/** The server process `pustaka serve`'s supervisor started below `root` (tsx may run the CLI in a process of its own). */
export const supervisedServer = (root: number) => descendants(root).find((pid) => readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("--supervised"));
