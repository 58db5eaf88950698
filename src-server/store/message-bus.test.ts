import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { startPostgres, type PostgresServer } from "../../test/helpers/postgres.js";
import { LocalBus, PgNotifyBus } from "./message-bus.js";
import { openSqlDatabase, type SqlDatabase } from "./sql-database.js";

const next = (subscribe: (fn: (payload: string) => void) => () => void, timeoutMs = 5_000) =>
  new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("no message")), timeoutMs);
    const off = subscribe((payload) => {
      clearTimeout(timer);
      off();
      resolve(payload);
    });
  });

describe("PgNotifyBus", () => {
  let server: PostgresServer;
  let url: string;
  const opened: { close(): Promise<void> }[] = [];
  before(async () => {
    server = await startPostgres();
    url = await server.createDatabase();
  });
  after(async () => {
    for (const o of opened.reverse()) await o.close();
    await server.close();
  });
  const replica = async (): Promise<{ store: SqlDatabase; bus: PgNotifyBus }> => {
    const store = await openSqlDatabase({ kind: "postgres", url });
    const bus = new PgNotifyBus(url, store);
    await bus.start();
    opened.push(store, bus);
    return { store, bus };
  };

  it("delivers a message to every replica, and again after Postgres restarts (telling subscribers it reconnected)", async () => {
    const a = await replica();
    const b = await replica();
    const atB = next((fn) => b.bus.subscribe("pustaka_test", fn));
    const atA = next((fn) => a.bus.subscribe("pustaka_test", fn));
    await new Promise((r) => setTimeout(r, 100));
    await a.bus.publish("pustaka_test", "hello");
    assert.equal(await atB, "hello");
    assert.equal(await atA, "hello", "the sender hears itself too");
    const reconnected = new Promise<void>((resolve) => b.bus.onReconnect(resolve));
    await server.stop();
    await server.start();
    await reconnected;
    const again = next((fn) => b.bus.subscribe("pustaka_test", fn));
    // The pool's connections died with the server: the first publish may need a retry.
    for (let i = 0; ; i++) {
      try {
        await a.bus.publish("pustaka_test", "after the restart");
        break;
      } catch (error) {
        if (i > 20) throw error;
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    assert.equal(await again, "after the restart");
    await assert.rejects(a.bus.publish("pustaka_test", "x".repeat(8000)), /over 7900 bytes/);
    assert.throws(() => a.bus.subscribe("bad; DROP TABLE x", () => {}), /invalid bus channel/);
  });
});

describe("LocalBus", () => {
  it("delivers in process", async () => {
    const bus = new LocalBus();
    const got = next((fn) => bus.subscribe("pustaka_test", fn));
    await bus.publish("pustaka_test", "x");
    assert.equal(await got, "x");
  });
});
