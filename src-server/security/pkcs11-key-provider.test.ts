/**
 * The PKCS#11 key provider against a real SoftHSM2 token in a temporary folder: wrap and
 * unwrap inside the token, tampering detected, the KEK never leaves the token, clear
 * errors for every misconfiguration, the key found again after a restart, rotation.
 */
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { after, before, describe, it } from "node:test";
import pkcs11js from "pkcs11js";
import { createSoftHsmToken, type SoftHsmToken } from "../../test/helpers/softhsm.js";
import { ServiceError } from "../errors.js";
import { Pkcs11KeyProvider } from "./pkcs11-key-provider.js";

const isServiceError = (code: string, message: RegExp) => (e: unknown) => {
  assert.ok(e instanceof ServiceError, `expected a ServiceError, got ${String(e)}`);
  assert.equal(e.code, code);
  assert.match(e.message, message);
  return true;
};

describe("Pkcs11KeyProvider (SoftHSM2)", () => {
  let token: SoftHsmToken;
  let spare: SoftHsmToken;
  let rotating: SoftHsmToken;
  let provider: Pkcs11KeyProvider;

  before(async () => {
    // SoftHSM2 reads its token folder when the module initializes: every token first.
    token = createSoftHsmToken();
    spare = createSoftHsmToken();
    rotating = createSoftHsmToken();
    provider = await Pkcs11KeyProvider.open(token.settings(), { create: true });
  });
  after(() => provider.close());

  it("generates the KEK in the token on first use and names it in its id", () => {
    assert.equal(provider.created, true);
    assert.match(provider.id, new RegExp(`^pkcs11:${token.tokenLabel}/pustaka-kek:v1\\.[0-9a-f]{8}$`));
  });

  it("wraps and unwraps data keys inside the token, each wrapping different", async () => {
    const dataKey = randomBytes(32);
    const a = await provider.wrapKey(dataKey);
    const b = await provider.wrapKey(dataKey);
    assert.notDeepEqual(a, b, "a fresh IV per wrapping");
    assert.ok(!a.includes(dataKey), "the wrapped key does not contain the key");
    assert.deepEqual(await provider.unwrapKey(a), dataKey);
    assert.deepEqual(await provider.unwrapKey(b), dataKey);
  });

  it("refuses a wrapped key that was altered anywhere", async () => {
    const wrapped = await provider.wrapKey(randomBytes(32));
    for (const at of [wrapped.length - 1, wrapped.length - 20, wrapped.length - 50]) {
      const bad = Buffer.from(wrapped);
      bad[at]! ^= 0x01;
      await assert.rejects(provider.unwrapKey(bad), /altered|not wrapped by this KEK/, `byte ${at}`);
    }
    const otherId = Buffer.from(wrapped);
    otherId[3]! ^= 0x01; // inside the KEK id: names a KEK that does not exist
    await assert.rejects(provider.unwrapKey(otherId), /not in the token/);
    await assert.rejects(provider.unwrapKey(wrapped.subarray(0, 30)), /truncated/);
    await assert.rejects(provider.unwrapKey(Buffer.concat([Buffer.from([1]), randomBytes(60)])), /another key provider/);
    assert.equal((await provider.unwrapKey(wrapped)).length, 32, "the session still works after failures");
  });

  it("serializes concurrent operations on its one session", async () => {
    const keys = Array.from({ length: 40 }, () => randomBytes(32));
    const wrapped = await Promise.all(keys.map((k) => provider.wrapKey(k)));
    const unwrapped = await Promise.all(wrapped.map((w) => provider.unwrapKey(w)));
    unwrapped.forEach((k, i) => assert.deepEqual(k, keys[i]));
  });

  it("keeps the KEK in the token: sensitive, never extractable, unreadable and not wrappable out", () => {
    const lib = new pkcs11js.PKCS11();
    lib.load(token.module);
    try {
      lib.C_Initialize();
    } catch (error) {
      assert.equal((error as { code: number }).code, pkcs11js.CKR_CRYPTOKI_ALREADY_INITIALIZED);
    }
    const slot = lib.C_GetSlotList(true).find((s) => lib.C_GetTokenInfo(s).label.trimEnd() === token.tokenLabel)!;
    const session = lib.C_OpenSession(slot, pkcs11js.CKF_SERIAL_SESSION | pkcs11js.CKF_RW_SESSION);
    try {
      try {
        lib.C_Login(session, pkcs11js.CKU_USER, token.pin);
      } catch (error) {
        assert.equal((error as { code: number }).code, pkcs11js.CKR_USER_ALREADY_LOGGED_IN);
      }
      lib.C_FindObjectsInit(session, [{ type: pkcs11js.CKA_LABEL, value: "pustaka-kek" }]);
      const [kek] = lib.C_FindObjects(session, 10);
      lib.C_FindObjectsFinal(session);
      assert.ok(kek, "the KEK is a token object found by its label");
      const attrs = lib.C_GetAttributeValue(session, kek, [
        { type: pkcs11js.CKA_TOKEN },
        { type: pkcs11js.CKA_SENSITIVE },
        { type: pkcs11js.CKA_EXTRACTABLE },
        { type: pkcs11js.CKA_ALWAYS_SENSITIVE },
        { type: pkcs11js.CKA_NEVER_EXTRACTABLE },
        { type: pkcs11js.CKA_WRAP },
        { type: pkcs11js.CKA_UNWRAP },
      ]);
      assert.deepEqual(
        attrs.map((a) => a.value[0]),
        [1, 1, 0, 1, 1, 0, 0],
        "token, sensitive, not extractable, always sensitive, never extractable, no wrap/unwrap",
      );
      assert.throws(() => lib.C_GetAttributeValue(session, kek, [{ type: pkcs11js.CKA_VALUE }]), /CKR_ATTRIBUTE_SENSITIVE/);
      // Nor can another key carry it out of the token.
      const wrapping = lib.C_GenerateKey(session, { mechanism: pkcs11js.CKM_AES_KEY_GEN }, [
        { type: pkcs11js.CKA_CLASS, value: pkcs11js.CKO_SECRET_KEY },
        { type: pkcs11js.CKA_KEY_TYPE, value: pkcs11js.CKK_AES },
        { type: pkcs11js.CKA_VALUE_LEN, value: 32 },
        { type: pkcs11js.CKA_TOKEN, value: false },
        { type: pkcs11js.CKA_WRAP, value: true },
      ]);
      assert.throws(() => lib.C_WrapKey(session, { mechanism: pkcs11js.CKM_AES_KEY_WRAP_PAD }, wrapping, kek, Buffer.alloc(128)), /CKR_KEY_UNEXTRACTABLE/);
      lib.C_DestroyObject(session, wrapping);
    } finally {
      lib.C_CloseSession(session);
      lib.close();
    }
  });

  it("finds the same KEK again after a restart, without creating one", async () => {
    const dataKey = randomBytes(32);
    const wrapped = await provider.wrapKey(dataKey);
    const again = await Pkcs11KeyProvider.open(token.settings());
    try {
      assert.equal(again.created, false);
      assert.equal(again.id, provider.id);
      assert.deepEqual(await again.unwrapKey(wrapped), dataKey);
    } finally {
      await again.close();
    }
    assert.deepEqual(await provider.unwrapKey(wrapped), dataKey, "closing one provider leaves the other's session logged in");
  });

  it("says clearly what is wrong: module, token, PIN, key", async () => {
    await assert.rejects(Pkcs11KeyProvider.open({ ...token.settings(), module: "/nonexistent/libpkcs11.so" }), isServiceError("hsm_module_not_found", /\/nonexistent\/libpkcs11\.so.*security\.pkcs11\.module/));
    await assert.rejects(
      Pkcs11KeyProvider.open({ ...token.settings(), tokenLabel: "no-such-token" }),
      isServiceError("hsm_token_not_found", new RegExp(`no token labelled 'no-such-token'.*tokens present: .*'${token.tokenLabel}'`)),
    );
    const wrongPin = spare;
    await assert.rejects(Pkcs11KeyProvider.open({ ...wrongPin.settings(), readPin: () => "wrong-pin" }), isServiceError("hsm_pin_incorrect", /wrong PIN for token/));
    await assert.rejects(Pkcs11KeyProvider.open(wrongPin.settings()), isServiceError("hsm_key_not_found", /no key labelled 'pustaka-kek'.*pustaka keys init-hsm/));
    await assert.rejects(
      Pkcs11KeyProvider.open({
        ...wrongPin.settings(),
        readPin: () => {
          throw new Error("no HSM PIN: set PUSTAKA_HSM_PIN");
        },
      }),
      /no HSM PIN/,
    );
    // The PIN never shows in an error.
    await assert.rejects(Pkcs11KeyProvider.open({ ...wrongPin.settings(), readPin: () => "secret-pin-123" }), (e: Error) => !e.message.includes("secret-pin-123"));
  });

  it("rotates: a new generation wraps, the old one still unwraps until destroyed; abort discards the new one", async () => {
    const token2 = rotating;
    const p = await Pkcs11KeyProvider.open(token2.settings("kek"), { create: true });
    try {
      const dataKey = randomBytes(32);
      const v1 = p.id;
      const wrappedV1 = await p.wrapKey(dataKey);

      const aborted = await p.beginRotation();
      assert.match(aborted.id, /:v2\./);
      assert.equal(p.id, aborted.id);
      await aborted.abort();
      assert.equal(p.id, v1, "abort puts the old KEK back");
      assert.deepEqual(p.kekIds(), [v1], "and destroys the new one");

      const rotation = await p.beginRotation();
      assert.equal(rotation.previousId, v1);
      assert.match(rotation.id, /:v2\./, "the aborted generation number is reused");
      const wrappedV2 = await p.wrapKey(dataKey);
      assert.deepEqual(await p.unwrapKey(wrappedV1), dataKey, "the old KEK still unwraps");
      assert.deepEqual(await p.unwrapKey(wrappedV2), dataKey);
      assert.deepEqual(await rotation.commit(), [], "old KEKs stay without destroyOld");

      const reopened = await Pkcs11KeyProvider.open(token2.settings("kek"));
      try {
        assert.equal(reopened.id, rotation.id, "after a restart the newest generation wraps");
        assert.deepEqual(await reopened.unwrapKey(wrappedV1), dataKey);
      } finally {
        await reopened.close();
      }

      const third = await p.beginRotation();
      assert.deepEqual((await third.commit({ destroyOld: true })).sort(), [v1, rotation.id].sort());
      assert.deepEqual(p.kekIds(), [third.id]);
      await assert.rejects(p.unwrapKey(wrappedV1), /is not in the token/, "a destroyed KEK unwraps nothing");
    } finally {
      await p.close();
    }
    await assert.rejects(p.wrapKey(randomBytes(32)), /closed/);
  });
});
