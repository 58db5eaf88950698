import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { gbnfToRegExp } from "./gbnf-regex.test-helper.js";
import { jsonSchemaToGbnf, SchemaError } from "./json-schema-grammar.js";
import { integerGrammar, numberGrammar, type Bound } from "./numeric-range.js";
import { patternToGbnf } from "./pattern-grammar.js";

const RAW_CHAR = String.raw`[^"\\\x00-\x1f]`;

describe("integer ranges", () => {
  it("accept exactly the canonical integers within the bounds, for any bounds", () => {
    fc.assert(
      fc.property(
        fc.option(fc.integer({ min: -100_000, max: 100_000 }), { nil: undefined }),
        fc.option(fc.integer({ min: -100_000, max: 100_000 }), { nil: undefined }),
        fc.boolean(),
        fc.boolean(),
        fc.array(fc.integer({ min: -200_000, max: 200_000 }), { minLength: 30, maxLength: 30 }),
        (a, b, aIncl, bIncl, probes) => {
          const lo: Bound | undefined = a === undefined ? undefined : { value: Math.min(a, b ?? a), inclusive: aIncl };
          const hi: Bound | undefined = b === undefined ? undefined : { value: Math.max(a ?? b, b), inclusive: bIncl };
          const min = lo ? (lo.inclusive ? lo.value : lo.value + 1) : -Infinity;
          const max = hi ? (hi.inclusive ? hi.value : hi.value - 1) : Infinity;
          if (min > max) return;
          const re = gbnfToRegExp(integerGrammar(lo, hi));
          for (const n of [...probes, min, max, min - 1, max + 1, 0, -1, 1].filter(Number.isFinite)) {
            assert.equal(re.test(String(n)), n >= min && n <= max, `${n} in [${min}, ${max}]: ${integerGrammar(lo, hi)}`);
          }
          assert.equal(re.test("007"), false, "no leading zeros");
          assert.equal(re.test("-0"), false);
          assert.equal(re.test("1.0"), false);
        },
      ),
      { numRuns: 300 },
    );
  });

  it("handle exclusive bounds that are not whole (gt=-1000.5)", () => {
    const re = gbnfToRegExp(integerGrammar({ value: -1000.5, inclusive: false }, { value: 999.5, inclusive: false }));
    assert.ok(re.test("-1000") && re.test("999") && !re.test("-1001") && !re.test("1000"));
  });
});

describe("number ranges", () => {
  it("accept exactly the decimals within whole-number bounds", () => {
    const decimal = fc.tuple(fc.integer({ min: -3000, max: 3000 }), fc.integer({ min: 0, max: 999 }), fc.boolean()).map(([i, f, frac]) => {
      const sign = i < 0 ? "-" : "";
      return frac ? `${sign}${Math.abs(i)}.${String(f).padStart(3, "0")}` : `${i}`;
    });
    fc.assert(
      fc.property(fc.integer({ min: -2000, max: 2000 }), fc.integer({ min: 0, max: 2000 }), fc.boolean(), fc.boolean(), fc.array(decimal, { minLength: 40, maxLength: 40 }), (a, width, aIncl, bIncl, probes) => {
        const lo = { value: a, inclusive: aIncl };
        const hi = { value: a + width, inclusive: bIncl };
        if (width === 0 && !(aIncl && bIncl)) return;
        const re = gbnfToRegExp(numberGrammar(lo, hi));
        for (const text of [...probes, String(a), String(a + width), `${a}.5`, `${a - 1}.5`, "0", "0.0", "-0.25"]) {
          const x = Number(text);
          const inside = (aIncl ? x >= a : x > a) && (bIncl ? x <= a + width : x < a + width);
          if (text === "-0" || /^-0(\.0*)?$/.test(text)) continue;
          assert.equal(re.test(text), inside, `${text} in ${aIncl ? "[" : "("}${a}, ${a + width}${bIncl ? "]" : ")"}`);
        }
      }),
      { numRuns: 300 },
    );
  });
});

describe("patterns", () => {
  const cases: [string, string[]][] = [
    ["^\\d{3}-\\d{4}$", ["555-1234", "55-1234", "5555-1234", "abc-defg", "555-12345"]],
    ["^[A-Z][a-z]+(?: [A-Z][a-z]+)*$", ["Kuala Lumpur", "kuala", "Kota Bharu Kelantan", "Ipoh", "A"]],
    ["^(MY|SG)-[0-9a-f]{2,4}$", ["MY-ab", "SG-1234", "ID-12", "MY-abcde", "MY-"]],
    ["banjir", ["banjir", "laporan banjir 2022", "banji", "BANJIR"]],
    ["^a.c$", ["abc", "a\"c", "a\\c", "a\nc", "ac"]],
    ["^[^0-9]*$", ["", "tiada", "ada 1", 'petik "dua"']],
    ["^\\w+@\\w+\\.com$", ["ali@mail.com", "ali@mail.org", "@mail.com"]],
    ["^x{2,}$", ["x", "xx", "xxxxx", "xy"]],
  ];
  for (const [pattern, probes] of cases) {
    it(`matches what ${pattern} matches, written as JSON strings`, () => {
      const re = gbnfToRegExp(patternToGbnf(pattern, RAW_CHAR).replaceAll("string-char", RAW_CHAR));
      const js = new RegExp(pattern);
      for (const s of probes) assert.equal(re.test(JSON.stringify(s).slice(1, -1)), js.test(s), `${JSON.stringify(s)} against ${pattern}`);
    });
  }

  it("refuses what a grammar cannot express, by name", () => {
    for (const [pattern, why] of [
      ["^(?=a)a$", /lookahead/],
      ["(a)\\1", /backreferences/],
      ["\\bword\\b", /word boundaries/],
      ["^a^b", /start/],
      ["a$b", /end/],
      ["[", /not a valid regular expression/],
    ] as const) {
      assert.throws(() => patternToGbnf(pattern, RAW_CHAR), why);
    }
  });
});

describe("jsonSchemaToGbnf", () => {
  const refused = (schema: unknown, path: string, message: RegExp) =>
    assert.throws(
      () => jsonSchemaToGbnf(schema),
      (e: unknown) => e instanceof SchemaError && e.path === path && message.test(e.message),
      `${JSON.stringify(schema)} → ${path}`,
    );

  it("refuses each keyword it cannot enforce, at its path", () => {
    refused({ type: "object", properties: { n: { type: "integer", multipleOf: 5 } } }, "properties.n.multipleOf", /divisibility/);
    refused({ type: "array", items: { type: "string" }, uniqueItems: true }, "uniqueItems", /uniqueItems/);
    refused({ type: "string", format: "email" }, "format", /"email" cannot be enforced/);
    refused({ type: "string", pattern: "^(?!x)" }, "pattern", /lookahead/);
    refused({ type: "string", pattern: "^a+$", maxLength: 3 }, "pattern", /together with minLength or maxLength/);
    refused({ type: "number", minimum: 0.5 }, "", /whole-number bounds/);
    refused({ $ref: "https://example.com/s.json" }, "$ref", /inside the schema/);
    refused({ not: { type: "string" } }, "not", /negation/);
    refused({ type: "integer", minimum: 5, maximum: 4 }, "", /no integer/);
    refused({ frobnicate: 1 }, "frobnicate", /not supported/);
    refused({ type: "object", properties: { a: { type: "str" } } }, "properties.a.type", /unknown type/);
  });

  it("writes compact rules with a root, reusing shared definitions", () => {
    const gbnf = jsonSchemaToGbnf({
      $defs: { point: { type: "object", properties: { x: { type: "number" }, y: { type: "number" } }, required: ["x", "y"], additionalProperties: false } },
      type: "object",
      properties: { a: { $ref: "#/$defs/point" }, b: { $ref: "#/$defs/point" } },
      required: ["a", "b"],
    });
    assert.match(gbnf, /^root ::= /);
    assert.equal((gbnf.match(/^ref-point ::=/gm) ?? []).length, 1);
    const literals = [...gbnf.matchAll(/"((?:[^"\\]|\\.)*)"/g)].map((m) => m[1]!);
    assert.ok(literals.length > 0 && literals.every((l) => l.trim() === l), `no whitespace between tokens: ${literals.join(" ")}`);
  });

  it("reads `properties: {}` as the empty object and a bare object type as an open one", () => {
    // A tool that takes no arguments declares `{"type":"object","properties":{}}`: its forced
    // call must be `{}`, not an object the model invents.
    const empty = jsonSchemaToGbnf({ type: "object", properties: {} });
    assert.match(empty, /^root-value ::= "\{" root-value-from-0-first "\}"$/m);
    assert.match(empty, /^root-value-from-0-first ::= ""$/m);
    const open = jsonSchemaToGbnf({ type: "object" });
    assert.match(open, /^object ::= "\{" \(string ":" value/m, "any members");
    const allowed = jsonSchemaToGbnf({ type: "object", properties: {}, additionalProperties: true });
    assert.equal(allowed, open, "additionalProperties: true opens it again");
  });

  it("compiles recursive schemas through $ref", () => {
    const gbnf = jsonSchemaToGbnf({ $defs: { node: { type: "object", properties: { name: { type: "string" }, children: { type: "array", items: { $ref: "#/$defs/node" } } }, required: ["name"] } }, $ref: "#/$defs/node" });
    assert.match(gbnf, /ref-node/);
  });
});
