import assert from "node:assert/strict";
import { copyFileSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, it } from "node:test";
import { tinyModel } from "../../test/helpers/models.js";
import { ServiceError } from "../errors.js";
import type { Catalog } from "./catalog.js";
import { ModelConfigError, ModelRegistry, idFromFilename } from "./model-registry.js";

const catalog: Catalog = {
  version: 1,
  models: [
    {
      id: "stories-catalog",
      type: "chat",
      name: "Stories",
      description: "",
      languages: ["en"],
      license: "mit",
      architecture: "llama",
      parameters: "260K",
      quantization: "F32",
      context_length: 2048,
      starter: false,
      source: { url: "http://127.0.0.1/stories.gguf", filename: "stories260K.gguf", bytes: null, sha256: null },
    },
  ],
  aliases: [
    { id: "svc-merlion-13b", type: "chat", target: "stories-catalog", description: "" },
    { id: "svc-embed-1024", type: "embedding", target: "stories-catalog", dimensions: 1024, description: "" },
  ],
};

describe("ModelRegistry", () => {
  it("finds catalog models in the models directory and gives them their aliases", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "pustaka-models-"));
    mkdirSync(path.join(dir, "publisher"));
    copyFileSync(tinyModel("stories260K"), path.join(dir, "stories260K.gguf"));
    copyFileSync(tinyModel("llama-2-tiny-random"), path.join(dir, "publisher", "Tiny Random.GGUF"));
    writeFileSync(path.join(dir, "broken.gguf"), "not a gguf");
    const warnings: string[] = [];
    const registry = await ModelRegistry.build({ modelsDir: dir, catalog, bindings: {}, onWarning: (w) => warnings.push(w) });
    const stories = registry.resolve("svc-merlion-13b");
    assert.equal(stories.id, "stories-catalog");
    assert.equal(stories.origin, "catalog");
    assert.equal(stories.gguf?.architecture, "llama");
    assert.equal(stories.gguf?.embeddingLength, 64);
    assert.equal(stories.type, "chat");
    assert.equal(registry.resolve("tiny-random").gguf?.quantization, "F16");
    assert.equal(warnings.filter((w) => /broken\.gguf/.test(w)).length, 1, "the unreadable file is skipped with a warning");
    assert.ok(warnings.some((w) => /svc-embed-1024 must resolve/.test(w)), "the mismatched catalog alias is reported");
    assert.equal(registry.find("svc-embed-1024"), undefined, "a 64-dim model must not take the 1024-dim alias");
  });

  it("binds ids and aliases to files given on the command line", async () => {
    const registry = await ModelRegistry.build({
      modelsDir: "/nonexistent",
      catalog,
      bindings: { "svc-merlion-13b": tinyModel("llama-2-tiny-random"), mine: tinyModel("stories260K") },
    });
    assert.equal(registry.resolve("svc-merlion-13b").gguf?.path, tinyModel("llama-2-tiny-random"));
    assert.equal(registry.resolve("mine").origin, "binding");
  });

  it("refuses to bind svc-embed-1024 to a model whose vectors are not 1024-dimensional", async () => {
    await assert.rejects(
      ModelRegistry.build({ modelsDir: "/nonexistent", catalog, bindings: { "svc-embed-1024": tinyModel("stories260K") } }),
      (e: unknown) => e instanceof ModelConfigError && /svc-embed-1024 must resolve to a model with 1024-dimension embeddings/.test(e.message) && /produces 64/.test(e.message),
    );
  });

  it("fails startup clearly for a binding to a missing file", async () => {
    await assert.rejects(
      ModelRegistry.build({ modelsDir: "/nonexistent", catalog, bindings: { x: "/nope/missing.gguf" } }),
      (e: unknown) => e instanceof ModelConfigError && /missing\.gguf/.test(e.message),
    );
  });

  it("answers unknown models with 404 model_not_found and a way to get them", async () => {
    const registry = await ModelRegistry.build({ modelsDir: "/nonexistent", catalog, bindings: {} });
    assert.throws(
      () => registry.resolve("svc-merlion-13b"),
      (e: unknown) => e instanceof ServiceError && e.kind === "not_found" && e.code === "model_not_found" && /models pull stories-catalog/.test(e.message),
    );
  });

  it("derives ids from file names", () => {
    assert.equal(idFromFilename("/m/Qwen2.5-7B-Instruct Q4_K_M.gguf"), "qwen2.5-7b-instruct-q4_k_m");
  });

  it("adds files at run time with their catalog identity and free aliases, and refuses bad ones", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "pustaka-models-"));
    const registry = await ModelRegistry.build({ modelsDir: dir, catalog, bindings: {} });
    assert.equal(registry.entries.length, 0);
    copyFileSync(tinyModel("stories260K"), path.join(dir, "stories260K.gguf"));
    const added = await registry.addFile(path.join(dir, "stories260K.gguf"));
    assert.equal(added.id, "stories-catalog", "a catalog file gets its catalog id");
    assert.deepEqual(added.aliases, ["svc-merlion-13b"], "and the chat alias it can serve, not the 1024-dim one");
    assert.equal(registry.resolve("svc-merlion-13b"), added);
    assert.equal(await registry.addFile(path.join(dir, "stories260K.gguf")), added, "adding twice is a no-op");
    const named = await registry.addFile(tinyModel("llama-2-tiny-random"), { id: "my-tiny" });
    assert.equal(registry.find("my-tiny"), named);
    await assert.rejects(registry.addFile(tinyModel("llama-2-tiny-random").replace(".gguf", "-copy.gguf")), ModelConfigError);
    writeFileSync(path.join(dir, "junk.gguf"), "not a gguf");
    await assert.rejects(registry.addFile(path.join(dir, "junk.gguf")), /cannot read model file/);
    copyFileSync(tinyModel("stories260K"), path.join(dir, "other.gguf"));
    await assert.rejects(registry.addFile(path.join(dir, "other.gguf"), { id: "my-tiny" }), /already in use/);
    await assert.rejects(registry.addFile(path.join(dir, "other.gguf"), { id: "Bad Id" }), /lowercase/);
  });

  it("defaults to the configured model when it can serve, else to the first model of the type", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "pustaka-models-"));
    const empty = await ModelRegistry.build({ modelsDir: dir, catalog, bindings: {} });
    assert.equal(empty.defaultName("chat", "svc-merlion-13b"), "svc-merlion-13b", "nothing to fall back to: the configured name (its lookup explains how to get it)");
    const onlyTiny = await ModelRegistry.build({ modelsDir: dir, catalog, bindings: { tiny: tinyModel("llama-2-tiny-random") } });
    assert.equal(onlyTiny.defaultName("chat", "svc-merlion-13b"), "tiny");
    assert.equal(onlyTiny.defaultName("embedding", "svc-embed-1024"), "svc-embed-1024", "a chat model is never an embedding default");
    const withAlias = await ModelRegistry.build({ modelsDir: dir, catalog, bindings: { tiny: tinyModel("llama-2-tiny-random"), "svc-merlion-13b": tinyModel("stories260K") } });
    assert.equal(withAlias.defaultName("chat", "svc-merlion-13b"), "svc-merlion-13b");
  });
});
