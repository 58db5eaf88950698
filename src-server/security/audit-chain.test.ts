import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { ChainVerifier, GENESIS_HASH, canonicalJson, entryHash, storedEntryHash, type AuditEntry } from "./audit-chain.js";

const entry = fc.record({
  actor: fc.string(),
  chain: fc.string({ minLength: 1 }),
  id: fc.string(),
  outcome: fc.constantFrom("success" as const, "failure" as const),
  prev_hash: fc.stringMatching(/^[0-9a-f]{64}$/),
  request_id: fc.option(fc.string(), { nil: null }),
  seq: fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }),
  time: fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
  type: fc.string(),
  data: fc.dictionary(fc.string(), fc.jsonValue()),
});

describe("audit chain hashing", () => {
  it("hashes a stored row (data kept as canonical JSON) exactly as the canonical JSON of the whole entry", () => {
    fc.assert(
      fc.property(entry, (e) => {
        const body = canonicalJson(e.data);
        const parsed = { object: "audit.event" as const, ...e, data: JSON.parse(body) as Record<string, unknown> };
        assert.equal(storedEntryHash(e, body), entryHash(parsed));
      }),
      { seed: 7, numRuns: 2000 },
    );
  });

  it("finds an altered entry, a removed one and a reordered pair, where they are", () => {
    const chain: AuditEntry[] = [];
    let prev = GENESIS_HASH;
    for (let seq = 1; seq <= 6; seq++) {
      const e = { object: "audit.event" as const, id: `aud_${seq}`, chain: "ws_a", seq, time: new Date(seq * 1000).toISOString(), type: "chat.completion", actor: "api_key:key_a", outcome: "success" as const, request_id: null, data: { n: seq }, prev_hash: prev, hash: "" };
      e.hash = entryHash(e);
      prev = e.hash;
      chain.push(e);
    }
    const check = (entries: AuditEntry[]) => {
      const v = new ChainVerifier("ws_a");
      for (const e of entries) v.add(e);
      return v.problems.map((p) => `${p.reason}@${p.seq}`);
    };
    assert.deepEqual(check(chain), []);
    assert.deepEqual(check(chain.map((e) => (e.seq === 3 ? { ...e, data: { n: 30 } } : e))), ["hash_mismatch@3"]);
    assert.deepEqual(check(chain.filter((e) => e.seq !== 4)), ["sequence_gap@5", "broken_link@5"]);
    assert.deepEqual(check([chain[0]!, chain[2]!, chain[1]!, ...chain.slice(3)]), ["sequence_gap@3", "broken_link@3", "sequence_gap@2", "broken_link@2", "sequence_gap@4", "broken_link@4"]);
  });
});
