import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { AuthThrottle, credentialDigest, sourceOf } from "./auth-throttle.js";

function harness(options: ConstructorParameters<typeof AuthThrottle>[0] = {}) {
  let now = 1_000_000;
  const throttle = new AuthThrottle({ ...options, now: () => now });
  return { throttle, advance: (ms: number) => (now += ms) };
}

describe("AuthThrottle", () => {
  it("blocks a source after maxFailures failures in the window, then doubles the block for each further failure, up to the cap", () => {
    const { throttle, advance } = harness({ maxFailures: 5, baseBlockMs: 1000, maxBlockMs: 8000 });
    for (let i = 0; i < 4; i++) throttle.failed("192.0.2.1");
    assert.equal(throttle.retryAfterMs("192.0.2.1"), 0, "four failures are forgiven");
    throttle.failed("192.0.2.1");
    assert.equal(throttle.retryAfterMs("192.0.2.1"), 1000, "the fifth blocks");
    assert.equal(throttle.retryAfterMs("192.0.2.2"), 0, "other sources are not affected");
    const blocks: number[] = [];
    for (let i = 0; i < 5; i++) {
      advance(throttle.retryAfterMs("192.0.2.1"));
      assert.equal(throttle.retryAfterMs("192.0.2.1"), 0, "the block ends");
      throttle.failed("192.0.2.1");
      blocks.push(throttle.retryAfterMs("192.0.2.1"));
    }
    assert.deepEqual(blocks, [2000, 4000, 8000, 8000, 8000], "on probation, each failure blocks again, twice as long, up to the cap");
  });

  it("counts failures within a window only, and forgives a source that stayed quiet", () => {
    const { throttle, advance } = harness({ maxFailures: 3, windowMs: 10_000, baseBlockMs: 1000, forgetAfterMs: 60_000 });
    throttle.failed("s");
    throttle.failed("s");
    advance(10_000);
    throttle.failed("s");
    assert.equal(throttle.retryAfterMs("s"), 0, "the first two fell out of the window");
    throttle.failed("s");
    throttle.failed("s");
    assert.equal(throttle.retryAfterMs("s"), 1000);
    advance(1000);
    throttle.failed("s");
    assert.equal(throttle.retryAfterMs("s"), 2000, "on probation");
    advance(60_000);
    throttle.failed("s");
    assert.equal(throttle.retryAfterMs("s"), 0, "quiet long enough: a fresh start");
  });

  it("lets a credential that already succeeded from the source through a block, and nothing else", () => {
    const { throttle } = harness({ maxFailures: 2 });
    const good = credentialDigest("bearer", "psk-good");
    throttle.succeeded("s", good);
    throttle.failed("s");
    throttle.failed("s");
    assert.ok(throttle.retryAfterMs("s") > 0);
    assert.equal(throttle.retryAfterMs("s", good), 0);
    assert.ok(throttle.retryAfterMs("s", credentialDigest("bearer", "psk-guess")) > 0);
    assert.ok(throttle.retryAfterMs("s", credentialDigest("session", "psk-good")) > 0, "kinds are told apart");
    assert.ok(throttle.retryAfterMs("t", good) === 0 && throttle.retryAfterMs("t") === 0);
  });

  it("remembers a bounded number of sources and credentials", () => {
    const { throttle } = harness({ maxSources: 1000, maxKnownGood: 2 });
    for (let i = 0; i < 100_000; i++) throttle.failed(`10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`);
    assert.equal(throttle.size, 1000);
    for (let i = 0; i < 10; i++) throttle.succeeded("s", credentialDigest("bearer", `k${i}`));
    throttle.failed("s");
    for (let i = 0; i < 10; i++) throttle.failed("s");
    assert.equal(throttle.retryAfterMs("s", credentialDigest("bearer", "k9")), 0);
    assert.ok(throttle.retryAfterMs("s", credentialDigest("bearer", "k0")) > 0, "the oldest known-good credential was forgotten");
  });

  it("counts IPv4 as is (also mapped into IPv6) and IPv6 by its /64", () => {
    assert.equal(sourceOf("203.0.113.9"), "203.0.113.9");
    assert.equal(sourceOf("::ffff:203.0.113.9"), "203.0.113.9");
    assert.equal(sourceOf("2001:db8:1:2:aaaa::1"), "2001:db8:1:2::/64");
    assert.equal(sourceOf("2001:db8:1:2:bbbb:cccc:dddd:eeee"), "2001:db8:1:2::/64");
    assert.equal(sourceOf("2001:0db8:0001:0002::9"), "2001:db8:1:2::/64");
    assert.equal(sourceOf("2001:db8::1"), "2001:db8:0:0::/64");
    assert.equal(sourceOf("::1"), "0:0:0:0::/64");
    assert.equal(sourceOf(undefined), "unknown");
  });
});
