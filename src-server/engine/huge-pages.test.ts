import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, it } from "node:test";
import { anonHugePageBytes, hugePageEnvironment, hugePagePlan, probeHugePages, readIntoMemory, type HugePageProbe } from "./huge-pages.js";

const linux = (over: Partial<HugePageProbe> = {}): HugePageProbe => ({
  platform: "linux",
  env: { GLIBC_TUNABLES: "glibc.malloc.hugetlb=1" },
  thpEnabled: "always [madvise] never\n",
  glibcVersion: "2.36",
  ...over,
});

describe("huge pages for model weights", () => {
  it("asks glibc for huge pages in a server's environment, keeping tunables already set", () => {
    assert.deepEqual(hugePageEnvironment({}, "linux"), { GLIBC_TUNABLES: "glibc.malloc.hugetlb=1" });
    assert.deepEqual(hugePageEnvironment({ GLIBC_TUNABLES: "glibc.malloc.arena_max=2" }, "linux"), { GLIBC_TUNABLES: "glibc.malloc.arena_max=2:glibc.malloc.hugetlb=1" });
    // a value the person set is theirs (0 turns it off)
    assert.deepEqual(hugePageEnvironment({ GLIBC_TUNABLES: "glibc.malloc.hugetlb=0" }, "linux"), {});
    assert.deepEqual(hugePageEnvironment({ PUSTAKA_HUGE_PAGES: "off" }, "linux"), {});
    assert.deepEqual(hugePageEnvironment({}, "darwin"), {});
    assert.deepEqual(hugePageEnvironment({}, "win32"), {});
  });

  it("reads models into memory only where the kernel, glibc and the server's start allow it", () => {
    assert.equal(hugePagePlan("auto", linux()).enabled, true);
    assert.equal(hugePagePlan("auto", linux({ thpEnabled: "[always] madvise never\n", env: { GLIBC_TUNABLES: "x=1:glibc.malloc.hugetlb=2" } })).enabled, true);
    const refusals: [Partial<HugePageProbe>, RegExp][] = [
      [{ platform: "darwin" }, /Linux/],
      [{ thpEnabled: "always madvise [never]\n" }, /never/],
      [{ thpEnabled: null }, /unavailable/],
      [{ glibcVersion: "2.31" }, /glibc 2\.31/],
      [{ glibcVersion: null }, /not found/],
      [{ env: {} }, /GLIBC_TUNABLES/],
      [{ env: { GLIBC_TUNABLES: "glibc.malloc.hugetlb=0" } }, /GLIBC_TUNABLES/],
    ];
    for (const [over, reason] of refusals) {
      const plan = hugePagePlan("auto", linux(over));
      assert.equal(plan.enabled, false, JSON.stringify(over));
      assert.match(plan.reason, reason);
      assert.match(plan.reason, /mapped/);
    }
    assert.equal(hugePagePlan("off", linux()).enabled, false);
  });

  it("keeps a model mapped unless it fits in half the memory available", () => {
    const on = hugePagePlan("auto", linux());
    assert.equal(readIntoMemory(on, 1_000, 4_000), true);
    assert.equal(readIntoMemory(on, 2_000, 4_000), true);
    assert.equal(readIntoMemory(on, 2_001, 4_000), false);
    assert.equal(readIntoMemory(hugePagePlan("off", linux()), 1, 4_000), false);
  });

  it("reads this process's huge pages and the system's setting", () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "pustaka-smaps-"));
    try {
      const smaps = path.join(dir, "smaps_rollup");
      writeFileSync(smaps, "Rss:              120000 kB\nAnonHugePages:    241664 kB\nShmemPmdMapped:        0 kB\n");
      assert.equal(anonHugePageBytes(smaps), 241664 * 1024);
      assert.equal(anonHugePageBytes(path.join(dir, "missing")), null);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    const probe = probeHugePages({ GLIBC_TUNABLES: "glibc.malloc.hugetlb=1" });
    assert.deepEqual(probe.env, { GLIBC_TUNABLES: "glibc.malloc.hugetlb=1" });
    assert.equal(probe.platform, process.platform);
    if (process.platform === "linux") {
      assert.match(probe.glibcVersion ?? "", /^2\.\d+$/);
      assert.match(probe.thpEnabled ?? "", /\[(always|madvise|never)\]/);
      assert.equal(typeof anonHugePageBytes(), "number");
    }
  });
});
