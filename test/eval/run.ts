/**
 * `npm run eval`: the retrieval-quality report per embedding model. The pass criterion
 * (hybrid not worse than the better of vector and keyword) applies to the multilingual
 * model, the kind a Malay/English deployment uses; the English-only MiniLM is reported
 * for comparison.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { testModel } from "../helpers/models.js";
import { formatEval, hybridHolds, runRetrievalEval, type HybridVariant } from "./retrieval-eval.js";

// `npm run eval -- --fusion convex:0.8,dbsf:0.5,rrf:0.5` measures other hybrid fusions beside the default.
const fusionArg = process.argv.indexOf("--fusion");
const variants: HybridVariant[] = (fusionArg > 0 ? (process.argv[fusionArg + 1] ?? "") : "")
  .split(",")
  .filter(Boolean)
  .map((spec) => {
    const [method, weight, trust] = spec.split(":");
    return { label: `hybrid ${method} w=${weight || "default"}${trust ? ` trust=${trust}` : ""}`, fusion: { method: method as HybridVariant["fusion"]["method"], ...(weight ? { vector_weight: Number(weight) } : {}), ...(trust ? { keyword_trust: trust as "squared" } : {}) } };
  });
const onlyE5 = process.argv.includes("--e5-only");
// `--tune`: tune on half the questions (`POST …/search/tune`) and measure every mode on the other half.
const tune = process.argv.includes("--tune");

let ok = true;
const models = [["multilingual-e5-small", "multilingual-e5-small", true], ["all-minilm-l6-v2", "all-minilm-l6-v2", false]] as const;
for (const [name, id, gated] of onlyE5 ? models.slice(0, 1) : models) {
  // `--data DIR` keeps the indexed corpus between runs.
  const dataArg = process.argv.indexOf("--data");
  const dataDir = dataArg > 0 ? path.join(process.argv[dataArg + 1]!, name) : undefined;
  if (dataDir) mkdirSync(dataDir, { recursive: true });
  const result = await runRetrievalEval({ modelPath: testModel(id), modelName: name, variants, tune, ...(dataDir ? { dataDir } : {}) });
  process.stdout.write(`${formatEval(result)}\n\n`);
  // `--evidence DIR` writes every question's relevance evidence (for fitting the gate).
  const evidenceArg = process.argv.indexOf("--evidence");
  if (evidenceArg > 0) writeFileSync(path.join(process.argv[evidenceArg + 1]!, `evidence-${name}.json`), JSON.stringify(result.evidence, null, 1));
  if (!tune && !hybridHolds(result)) {
    process.stdout.write(`${gated ? "FAIL" : "note"}: hybrid is worse than the better of vector and keyword for ${name}\n\n`);
    if (gated) ok = false;
  }
}
process.exit(ok ? 0 : 1);
