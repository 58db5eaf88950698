import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { fileCitations, lastUserText, withSources, type FileSearchRun } from "./file-search.js";

const hit = (fileId: string, filename: string, text: string) => ({ vectorStoreId: "vs_a", fileId, documentId: `doc_${fileId}`, chunkId: `chk_${fileId}`, filename, score: 1, attributes: {}, text, pageStart: null, pageEnd: null, headingPath: [] });
const run: FileSearchRun = {
  id: "fs_x",
  queries: ["q"],
  queryTokens: 3,
  hits: [hit("file-leave", "leave.md", "Employees with less than five years of service get 18 days of annual leave."), hit("file-rice", "rice.md", "The ceiling price of local white rice is RM2.60 per kilogram.")],
};

describe("file_search", () => {
  it("puts the numbered passages before the last question and the grounded rules after the request's instructions", () => {
    const messages = withSources(
      [
        { role: "system", content: "Be brief." },
        { role: "user", content: "Hello" },
        { role: "assistant", content: "Hi", toolCalls: [] },
        { role: "user", content: "How many days of annual leave?" },
      ],
      run,
    );
    assert.equal(messages.length, 4);
    assert.match(messages[0]!.content as string, /^Be brief\.\n\nYou answer questions using only the numbered sources/);
    assert.equal(messages[1]!.content, "Hello");
    assert.match(messages[3]!.content as string, /^Sources:\n\n\[1\] \(leave\.md\)\nEmployees[\s\S]*\[2\] \(rice\.md\)[\s\S]*Question: How many days of annual leave\?$/);
    const bare = withSources([{ role: "user", content: "Harga beras?" }], { ...run, hits: [] });
    assert.equal(bare[0]!.role, "system");
    assert.match(bare[1]!.content as string, /No passage in the vector stores matched/);
    assert.throws(() => lastUserText([{ role: "system", content: "x" }]), /needs a user message/);
  });

  it("cites files where markers stood, then at the end of supported sentences left unmarked", () => {
    const text = "Employees with less than five years of service get 18 days of annual leave. The ceiling price of local white rice is RM2.60 per kilogram.";
    const cites = fileCitations(text, [{ index: 74, source: 1 }], run);
    assert.deepEqual(cites[0], { index: 74, fileId: "file-leave", filename: "leave.md" });
    // The second sentence was not marked; the attribution finds rice.md behind it.
    assert.deepEqual(cites.slice(1), [{ index: text.length - 1, fileId: "file-rice", filename: "rice.md" }]);
    assert.deepEqual(fileCitations(text, [], run, { attribution: false }), []);
    assert.deepEqual(fileCitations("Nothing here matches at all, truly.", [], run), []);
  });
});
