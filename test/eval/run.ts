/** `npm run eval`: the retrieval-quality report, per embedding model; fails if hybrid loses. */
import { testModel } from "../helpers/models.js";
import { formatEval, hybridHolds, runRetrievalEval } from "./retrieval-eval.js";

let ok = true;
for (const [name, id] of [["multilingual-e5-small", "multilingual-e5-small"], ["all-minilm-l6-v2", "all-minilm-l6-v2"]] as const) {
  const result = await runRetrievalEval({ modelPath: testModel(id), modelName: name });
  process.stdout.write(`${formatEval(result)}\n\n`);
  if (!hybridHolds(result)) {
    ok = false;
    process.stdout.write(`FAIL: hybrid is worse than the better of vector and keyword for ${name}\n\n`);
  }
}
process.exit(ok ? 0 : 1);
