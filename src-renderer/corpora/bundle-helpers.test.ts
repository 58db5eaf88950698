import { describe, expect, it } from "vitest";
import { filenameOf } from "../api/bundles-api.js";
import { bundleFilename } from "./bundle-save.js";
import { passphraseStrength } from "./passphrase-strength.js";
import { parseRecipients } from "./recipient-keys.js";

const KEY = "age1ql3z7hjy54pw3hyww5ayyfg7zqgvc7w3j2elw8zmrj2kg5sfn9aqmcac8p";

describe("passphraseStrength", () => {
  it("calls anything under 12 characters short, whatever it is made of", () => {
    expect(passphraseStrength("").strength).toBe("short");
    expect(passphraseStrength("X7#q!Lp2@zR").strength).toBe("short");
    // Characters, not UTF-16 units: twelve Malay letters with marks are twelve.
    expect(passphraseStrength("é".repeat(11)).strength).toBe("short");
  });

  it("marks down repeats, runs and common words", () => {
    expect(passphraseStrength("aaaaaaaaaaaaaaaa").strength).toBe("weak");
    expect(passphraseStrength("abcdefghijklmnop").strength).toBe("weak");
    expect(passphraseStrength("Password123456").strength).toBe("weak");
    expect(passphraseStrength("katalaluan2024!").strength).toBe("weak");
  });

  it("rates random words and long mixed passphrases strong", () => {
    expect(passphraseStrength("sungai-kelantan-naik-dua-puluh-enam").strength).toBe("strong");
    expect(passphraseStrength("Gx7!mQ2#vL9@tR4$").strength).toBe("strong");
    // Spaces between words count as characters too.
    expect(passphraseStrength("tiga ekor kucing hitam berlari").strength).toBe("strong");
    const fair = passphraseStrength("correcthorse");
    expect(fair.strength).toBe("fair");
    expect(fair.bits).toBeGreaterThan(passphraseStrength("aaaaaaaaaaaa").bits);
  });
});

describe("parseRecipients", () => {
  it("takes one or more age1 keys, separated by lines, spaces or commas, once each", () => {
    expect(parseRecipients(`  ${KEY}\n`)).toEqual({ keys: [KEY], problem: null, offending: null });
    expect(parseRecipients(`${KEY}, ${KEY}`).keys).toEqual([KEY]);
  });

  it("names what was pasted by mistake, never echoing a secret key", () => {
    expect(parseRecipients("   ").problem).toBe("empty");
    expect(parseRecipients("AGE-SECRET-KEY-1QQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQ")).toEqual({ keys: [], problem: "secret", offending: null });
    expect(parseRecipients("ed25519:0123456789abcdef")).toMatchObject({ problem: "signer", offending: "ed25519:0123456789abcdef" });
    expect(parseRecipients(KEY.slice(0, -1))).toMatchObject({ problem: "invalid" });
    expect(parseRecipients(`${KEY}b`).problem).toBe("invalid");
    expect(parseRecipients("<script>alert(1)</script>".repeat(20)).offending).toHaveLength(25);
    const bech32 = "qpzry9x8gf2tvdw0s3jn54khce6mua7l";
    const many = Array.from({ length: 21 }, (_, i) => `age1${"q".repeat(57)}${bech32[i]}`);
    expect(parseRecipients(many.slice(0, 20).join("\n")).keys).toHaveLength(20);
    expect(parseRecipients(many.join("\n")).problem).toBe("tooMany");
  });
});

describe("bundle file names", () => {
  it("makes the server's name from a corpus name, and reads it back from Content-Disposition", () => {
    expect(bundleFilename("Notis banjir dan air")).toBe("notis-banjir-dan-air.pustaka");
    expect(bundleFilename("Laporan — Kelantan 2022!")).toBe("laporan-kelantan-2022.pustaka");
    expect(bundleFilename("日本語")).toBe("corpus.pustaka");
    expect(filenameOf('attachment; filename="notis-banjir-dan-air.pustaka"')).toBe("notis-banjir-dan-air.pustaka");
    expect(filenameOf(null)).toBeNull();
    expect(filenameOf("inline")).toBeNull();
  });
});
