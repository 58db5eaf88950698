import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ServiceError } from "../../errors.js";
import { parseWith } from "../validate.js";
import { CreateFileBatchSchema, CreateVectorStoreSchema, SearchSchema, batchItemsOf, parseFilters } from "./vector-store-wire.js";

const paramOf = (f: () => unknown): string | null => {
  try {
    f();
  } catch (error) {
    assert.ok(error instanceof ServiceError);
    assert.equal(error.kind, "invalid_request");
    return error.param;
  }
  assert.fail("expected a 400");
};

describe("vector store wire", () => {
  it("parses OpenAI's filters and names the place at fault", () => {
    assert.deepEqual(parseFilters({ type: "and", filters: [{ type: "eq", key: "a", value: 1 }, { type: "in", key: "b", value: ["x", 2] }] }), {
      type: "and",
      filters: [
        { type: "eq", key: "a", value: 1 },
        { type: "in", key: "b", value: ["x", 2] },
      ],
    });
    assert.equal(paramOf(() => parseFilters({ type: "like", key: "a", value: 1 })), "filters.type");
    assert.equal(paramOf(() => parseFilters({ type: "or", filters: [{ type: "eq", key: "a" }] })), "filters.filters.0.value");
    assert.equal(paramOf(() => parseFilters({ type: "or", filters: [] })), "filters.filters");
    assert.equal(paramOf(() => parseFilters({ type: "in", key: "a", value: "x" })), "filters.value");
    assert.equal(paramOf(() => parseFilters({ type: "eq", key: "", value: "x" })), "filters.key");
    assert.equal(paramOf(() => parseFilters({ type: "eq", key: "a", value: { x: 1 } })), "filters.value");
    assert.equal(paramOf(() => parseFilters({ type: "eq", key: "a", value: 1, extra: 2 })), "filters.extra");
    assert.equal(paramOf(() => parseFilters("eq")), "filters");
    let deep: unknown = { type: "eq", key: "a", value: 1 };
    for (let i = 0; i < 20; i++) deep = { type: "and", filters: [deep] };
    assert.match(paramOf(() => parseFilters(deep)) ?? "", /^filters(\.filters\.0)+$/);
  });

  it("keeps vector stores within OpenAI's limits", () => {
    const metadata = Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, "v"]));
    assert.equal(paramOf(() => parseWith(CreateVectorStoreSchema, { metadata })), "metadata");
    assert.equal(paramOf(() => parseWith(CreateVectorStoreSchema, { file_ids: ["file-x"], chunking_strategy: { type: "static", static: { max_chunk_size_tokens: 50, chunk_overlap_tokens: 0 } } })), "chunking_strategy.static.max_chunk_size_tokens");
    assert.equal(paramOf(() => parseWith(CreateVectorStoreSchema, { file_ids: ["file-x"], chunking_strategy: { type: "static", static: { max_chunk_size_tokens: 800, chunk_overlap_tokens: 401 } } })), "chunking_strategy.static.chunk_overlap_tokens");
    assert.equal(paramOf(() => parseWith(CreateVectorStoreSchema, { expires_after: { anchor: "created_at", days: 1 } })), "expires_after.anchor");
    assert.equal(paramOf(() => parseWith(CreateVectorStoreSchema, { expires_after: { anchor: "last_active_at", days: 0 } })), "expires_after.days");
    assert.ok(parseWith(CreateVectorStoreSchema, { name: "x", file_ids: ["file-x"], chunking_strategy: { type: "static", static: { max_chunk_size_tokens: 800, chunk_overlap_tokens: 400 } }, expires_after: { anchor: "last_active_at", days: 7 } }));
  });

  it("checks searches and batches", () => {
    assert.equal(paramOf(() => parseWith(SearchSchema, { query: "" })), "query");
    assert.equal(paramOf(() => parseWith(SearchSchema, { query: [] })), "query");
    assert.equal(paramOf(() => parseWith(SearchSchema, { query: "x", max_num_results: 51 })), "max_num_results");
    assert.equal(parseWith(SearchSchema, { query: ["a", "b"] }).max_num_results, 10);
    assert.equal(paramOf(() => parseWith(CreateFileBatchSchema, {})), null);
    assert.equal(paramOf(() => parseWith(CreateFileBatchSchema, { file_ids: ["a"], files: [{ file_id: "b" }] })), null);
    assert.deepEqual(batchItemsOf(parseWith(CreateFileBatchSchema, { file_ids: ["a"], attributes: { k: 1 } })), [{ fileId: "a", attributes: { k: 1 }, chunking: { type: "auto" } }]);
    assert.deepEqual(batchItemsOf(parseWith(CreateFileBatchSchema, { files: [{ file_id: "b", chunking_strategy: { type: "static", static: { max_chunk_size_tokens: 200, chunk_overlap_tokens: 20 } } }] })), [
      { fileId: "b", attributes: {}, chunking: { type: "static", maxChunkSizeTokens: 200, chunkOverlapTokens: 20 } },
    ]);
  });
});
