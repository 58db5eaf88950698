import assert from "node:assert/strict";
import { afterEach, beforeEach, describe, it } from "node:test";
import { ServiceError } from "../errors.js";
import { describeBackends } from "../../test/helpers/store-backends.js";
import { SessionStore, SqlSignInTokens } from "../store/session-store.js";
import { openSqlDatabase, type SqlDatabase } from "../store/sql-database.js";
import { WorkspaceStore } from "../store/workspace-store.js";
import { DEFAULT_WORKSPACE_ID } from "./admin-service.js";
import { SessionService } from "./session-service.js";

const isError = (code: string) => (e: unknown) => e instanceof ServiceError && e.kind === "authentication" && e.code === code;

describe("SessionService", () => {
  let store: SqlDatabase;
  let sessions: SessionService;
  const t0 = 1_000_000;
  beforeEach(async () => {
    store = await openSqlDatabase({ kind: "sqlite", dataDir: ":memory:" });
    await new WorkspaceStore(store).insert({ id: DEFAULT_WORKSPACE_ID, name: "Default", createdAt: 1 });
    sessions = new SessionService(new SessionStore(store), { idleSeconds: 1000, signInTokenSeconds: 100 });
  });
  afterEach(async () => {
    await store.close();
  });

  it("trades a valid sign-in token for a session stored only as a hash", async () => {
    const token = await sessions.issueSignInToken(t0);
    await assert.rejects(sessions.signIn("psi-unknown", "ua", t0), isError("invalid_sign_in_token"));
    await assert.rejects(sessions.signIn(token, "ua", t0 + 100), isError("invalid_sign_in_token"), "expired with its lifetime");
    const started = await sessions.signIn(token, "Mozilla", t0 + 10);
    assert.match(started.secret, /^pss-/);
    assert.equal(started.expiresAt, t0 + 1010);
    assert.equal(started.principal.workspaceId, DEFAULT_WORKSPACE_ID);
    const rows = await store.db.selectFrom("sessions").selectAll().execute();
    assert.equal(rows.length, 1);
    assert.ok(!JSON.stringify(rows).includes(started.secret), "secret stored in clear");
    assert.equal((await sessions.authenticate(started.secret, t0 + 20)).keyId, started.principal.keyId);
  });

  it("slides the expiry on use (at most once a minute), ends it when idle, and signs out", async () => {
    const { secret } = await sessions.signIn(await sessions.issueSignInToken(t0), "ua", t0);
    const expiresAt = async () => (await store.db.selectFrom("sessions").select("expires_at").executeTakeFirstOrThrow()).expires_at;
    await sessions.authenticate(secret, t0 + 30);
    assert.equal(await expiresAt(), t0 + 1000, "used within the minute: no write");
    await sessions.authenticate(secret, t0 + 900);
    assert.equal(await expiresAt(), t0 + 1900);
    await assert.rejects(sessions.authenticate(secret, t0 + 1900), isError("invalid_session"));
    await assert.rejects(sessions.authenticate("psk-not-a-session", t0), isError("invalid_session"));
    const other = await sessions.signIn(await sessions.issueSignInToken(t0), "ua", t0);
    await sessions.signOut(other.secret);
    await assert.rejects(sessions.authenticate(other.secret, t0 + 1), isError("invalid_session"));
    await sessions.signOut(other.secret);
  });

  it("purges expired sessions and sign-in tokens", async () => {
    const token = await sessions.issueSignInToken(t0);
    const old = await sessions.signIn(token, "ua", t0);
    const fresh = await sessions.signIn(token, "ua", t0 + 50);
    await sessions.purgeExpired(t0 + 1000);
    const left = await store.db.selectFrom("sessions").select("expires_at").execute();
    assert.deepEqual(left.map((r) => r.expires_at), [t0 + 1050]);
    await assert.rejects(sessions.authenticate(old.secret, t0 + 10), isError("invalid_session"), "deleted, not only expired");
    assert.ok(await sessions.authenticate(fresh.secret, t0 + 1000));
    await assert.rejects(sessions.signIn(token, "ua", t0 + 99), isError("invalid_sign_in_token"), "the expired token was forgotten");
  });
});

describeBackends("SessionService with sign-in tokens in the store", (backend) => {
  it("keeps sign-in tokens in the store, so a link one replica printed signs in at another, until it expires", async () => {
    const first = await backend.open();
    await new WorkspaceStore(first).insert({ id: "ws_default", name: "Default", createdAt: 1 });
    const second = backend.dialect === "postgres" ? await openSqlDatabase({ kind: "postgres", url: backend.lastUrl! }) : first;
    try {
      const printing = new SessionService(new SessionStore(first), {}, new SqlSignInTokens(first));
      const other = new SessionService(new SessionStore(second), {}, new SqlSignInTokens(second));
      const t0 = 1_000_000;
      const token = await printing.issueSignInToken(t0);
      const started = await other.signIn(token, "ua", t0 + 10);
      assert.equal((await printing.authenticate(started.secret, t0 + 20)).kind, "session", "the session works at the first replica too");
      await assert.rejects(other.signIn(token, "ua", t0 + 86_400), { code: "invalid_sign_in_token" });
      await other.purgeExpired(t0 + 86_400);
      const rows = await first.db.selectFrom("sign_in_tokens").selectAll().execute();
      assert.equal(rows.length, 0, "expired tokens are swept");
      await assert.rejects(other.signIn("psi-" + "x".repeat(500), "ua", t0), { code: "invalid_sign_in_token" });
    } finally {
      if (second !== first) await second.close();
    }
  });
});
