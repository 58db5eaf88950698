import { describe, expect, it } from "vitest";
import { exportPath, queryString } from "../api/audit-api.js";
import { eventsQuery, exportRange, isFiltered, localInputToIso, NO_FILTERS, withRange } from "./audit-filters.js";

const NOW = Date.parse("2026-11-22T12:00:00.000Z");

describe("audit filters", () => {
  it("make no filter parameters when nothing is chosen", () => {
    expect(eventsQuery(NO_FILTERS)).toEqual({ limit: 50, order: "desc" });
    expect(isFiltered(NO_FILTERS)).toBe(false);
  });

  it("turn a type group, outcome, actor, request and a preset range into the list query", () => {
    const filters = withRange({ ...NO_FILTERS, type: "document.", outcome: "failure", actor: "  api_key:key_9 ", requestId: "req_1" }, "24h", NOW);
    expect(eventsQuery(filters, "aud_50")).toEqual({ limit: 50, order: "desc", type: "document.", outcome: "failure", actor: "api_key:key_9", request_id: "req_1", since: "2026-11-21T12:00:00.000Z", after: "aud_50" });
    expect(queryString({ ...eventsQuery(filters) })).toBe("?limit=50&order=desc&type=document.&outcome=failure&actor=api_key%3Akey_9&request_id=req_1&since=2026-11-21T12%3A00%3A00.000Z");
    expect(isFiltered(filters)).toBe(true);
  });

  it("fix a preset's bounds when chosen, and drop them for any time", () => {
    const lastHour = withRange(NO_FILTERS, "1h", NOW);
    expect(lastHour.since).toBe("2026-11-22T11:00:00.000Z");
    expect(lastHour.until).toBeNull();
    expect(withRange(lastHour, "any", NOW)).toEqual(NO_FILTERS);
    // Custom keeps the preset's bounds as a starting point for editing.
    expect(withRange(lastHour, "custom", NOW).since).toBe("2026-11-22T11:00:00.000Z");
  });

  it("pass the time bounds, and only those, to an export", () => {
    const filters = { ...NO_FILTERS, type: "chat." as const, range: "custom" as const, since: localInputToIso("2026-11-01T00:00"), until: localInputToIso("2026-11-02T00:00") };
    expect(exportRange(filters)).toEqual({ since: filters.since, until: filters.until });
    expect(exportPath("csv", exportRange(filters))).toBe(`/v1/audit/export?format=csv&since=${encodeURIComponent(filters.since!)}&until=${encodeURIComponent(filters.until!)}`);
    expect(exportPath("jsonl", exportRange(NO_FILTERS))).toBe("/v1/audit/export?format=jsonl");
    expect(localInputToIso("")).toBeNull();
    expect(localInputToIso("not a date")).toBeNull();
  });
});
