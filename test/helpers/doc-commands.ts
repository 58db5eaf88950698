/**
 * The commands a document shows, for tests that check each was run. A Markdown document
 * marks each ```sh block with `<!-- checked: NAME -->`, naming the test file that runs its
 * commands; every ```sh block must carry a mark.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { REPO_ROOT } from "./models.js";

export interface DocBlock {
  checkedBy: string | null;
  lines: string[];
}

/** The ```sh blocks of a document under the repository, with the test that checks each. */
export function shellBlocks(relativePath: string): DocBlock[] {
  const text = readFileSync(path.join(REPO_ROOT, relativePath), "utf8");
  return [...text.matchAll(/(?:<!-- checked: ([\w-]+) -->\n)?```sh\n([\s\S]*?)\n```/g)].map((m) => ({
    checkedBy: m[1] ?? null,
    lines: m[2]!.split("\n").filter((l) => l.trim() && !l.trim().startsWith("#")),
  }));
}

/** Flags of `pustaka` that take a value. */
const VALUED = new Set(["--data-dir", "--kek-file", "--keep", "--config", "--model", "--public-key", "--database", "--models-dir", "--output", "--passphrase-file", "--recipient", "--expect-signer", "--name", "--embedding-model", "--url", "--key"]);

/** A command line's words (no quotes or expansions in documented `pustaka` lines), without leading `VAR=value`s. */
function words(line: string): string[] {
  return line
    .trim()
    .split(/\s+/)
    .filter((w, i, all) => !(/^[A-Z_]+=/.test(w) && all.slice(0, i).every((x) => /^[A-Z_]+=/.test(x))));
}

interface Shape {
  command: string;
  positional: number;
  flags: Set<string>;
}

function shapeOf(args: string[]): Shape {
  const [command, ...rest] = args;
  let positional = 0;
  const flags = new Set<string>();
  for (let i = 0; i < rest.length; i++) {
    const word = rest[i]!;
    if (word.startsWith("--")) {
      const [flag] = word.split("=");
      flags.add(flag!);
      if (VALUED.has(flag!) && !word.includes("=")) i++;
    } else positional++;
  }
  return { command: command ?? "", positional, flags };
}

/**
 * Asserts each `pustaka …` line of the blocks checked by `checkedBy` was run: a run of the
 * same command with as many arguments, passing at least the flags the line shows (a test
 * adds its own, such as `--data-dir` and `--model`).
 */
export function assertDocumentedCommandsRun(relativePath: string, checkedBy: string, runs: string[][]): void {
  const blocks = shellBlocks(relativePath);
  assert.deepEqual(
    blocks.filter((b) => b.checkedBy === null).map((b) => b.lines),
    [],
    `every shell block of ${relativePath} names the test that runs it`,
  );
  const documented = blocks.filter((b) => b.checkedBy === checkedBy).flatMap((b) => b.lines.map(words).filter((w) => w[0] === "pustaka"));
  assert.ok(documented.length > 0, `${relativePath} has commands checked by ${checkedBy}`);
  const ran = runs.map(shapeOf);
  for (const line of documented) {
    const want = shapeOf(line.slice(1));
    const found = ran.some((r) => r.command === want.command && r.positional === want.positional && [...want.flags].every((f) => r.flags.has(f)));
    assert.ok(found, `\`${line.join(" ")}\` (${relativePath}) is run by a test`);
  }
}
