/**
 * The packaging configuration (electron.config.ts), checked without packaging: it loads
 * through electron-builder's own loader, satisfies electron-builder's JSON schema, keeps
 * every native binary of the production dependencies out of the asar archive (matched
 * with electron-builder's own file matcher), and includes no model weights.
 */
import assert from "node:assert/strict";
import { readdirSync, readFileSync, statSync, type Stats } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { describe, it } from "node:test";
import { Ajv } from "ajv";
import { FileMatcher } from "app-builder-lib/out/fileMatcher.js";
import { getConfig } from "app-builder-lib/out/util/config/config.js";
import config from "../electron.config.js";
import { REPO_ROOT } from "../test/helpers/models.js";

const require = createRequire(import.meta.url);
const NATIVE = /\.(node|dll|dylib|exe|so(\.\d+)*)$/;

/** Directories of the production dependencies, transitively (what electron-builder packs). */
function productionPackages(): Map<string, string> {
  const found = new Map<string, string>();
  const visit = (name: string, from: string) => {
    let manifest: string;
    try {
      manifest = require.resolve(`${name}/package.json`, { paths: [from] });
    } catch {
      // Optional dependencies of other platforms are not installed; packages without an exported package.json are found below.
      const dir = findPackageDir(name, from);
      if (!dir) return;
      manifest = path.join(dir, "package.json");
    }
    const dir = path.dirname(manifest);
    if (found.has(dir)) return;
    found.set(dir, name);
    const pkg = JSON.parse(readFileSync(manifest, "utf8")) as { dependencies?: Record<string, string>; optionalDependencies?: Record<string, string> };
    for (const dep of Object.keys({ ...pkg.dependencies, ...pkg.optionalDependencies })) visit(dep, dir);
  };
  const root = JSON.parse(readFileSync(path.join(REPO_ROOT, "package.json"), "utf8")) as { dependencies: Record<string, string> };
  for (const dep of Object.keys(root.dependencies)) visit(dep, REPO_ROOT);
  return found;
}

function findPackageDir(name: string, from: string): string | null {
  for (let dir = from; ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, "node_modules", name);
    try {
      if (statSync(path.join(candidate, "package.json")).isFile()) return candidate;
    } catch {
      // keep looking upwards
    }
    if (path.dirname(dir) === dir) return null;
  }
}

/** Files under `dir`, not descending into nested node_modules (those are packages of their own). */
function walk(dir: string, out: string[] = []): string[] {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory() && entry.name !== "node_modules") walk(full, out);
    else if (entry.isFile()) out.push(full);
  }
  return out;
}

/** electron-builder's own matching of `patterns` against project files, macros expanded for linux-x64. */
function matcher(patterns: string[]): (file: string) => boolean {
  const expand = (pattern: string) => pattern.replaceAll("${os}", "linux").replaceAll("${arch}", "x64");
  const filter = new FileMatcher(REPO_ROOT, REPO_ROOT, expand, patterns).createFilter();
  const fileStat = { isDirectory: () => false } as Stats;
  return (file) => filter(path.resolve(REPO_ROOT, file), fileStat);
}

describe("electron.config.ts", () => {
  it("loads through electron-builder's own config loader (no compile step needed)", async () => {
    const loaded = await getConfig(REPO_ROOT, path.join(REPO_ROOT, "electron.config.ts"), null);
    assert.equal(loaded.productName, "Pustaka");
    assert.deepEqual(loaded.asarUnpack, config.asarUnpack);
  });

  it("satisfies electron-builder's JSON schema, which does catch mistakes", () => {
    const schema = JSON.parse(readFileSync(require.resolve("app-builder-lib/scheme.json"), "utf8")) as object;
    const validate = new Ajv({ allErrors: true, strict: false }).compile(schema);
    assert.equal(validate(config), true, JSON.stringify(validate.errors, null, 2));
    assert.equal(validate({ ...config, asarUnpak: ["x"] }), false, "an unknown key is refused");
    assert.equal(validate({ ...config, linux: { ...config.linux, target: 42 } }), false, "a wrong type is refused");
  });

  it("targets AppImage and deb, dmg, and NSIS, with icons from resources/", () => {
    assert.deepEqual(config.linux?.target, ["AppImage", "deb"]);
    assert.deepEqual(config.mac?.target, ["dmg"]);
    assert.deepEqual(config.win?.target, ["nsis"]);
    assert.equal(config.productName, "Pustaka");
    assert.match(config.appId!, /^[a-z]+(\.[a-z]+)+$/);
    for (const icon of [config.mac?.icon, config.win?.icon, "resources/icon.png"]) assert.ok(statSync(path.join(REPO_ROOT, icon!)).size > 0, icon!);
    const linuxIcons = readdirSync(path.join(REPO_ROOT, config.linux.icon!));
    for (const size of [16, 32, 48, 64, 128, 256, 512]) assert.ok(linuxIcons.includes(`${size}x${size}.png`), `${size}x${size}.png`);
  });

  it("icons: PNGs of the stated sizes, an ICO with 16–256, an ICNS with 16–1024", () => {
    const pngSize = (data: Buffer) => {
      assert.equal(data.subarray(1, 4).toString("latin1"), "PNG");
      return [data.readUInt32BE(16), data.readUInt32BE(20)];
    };
    const resources = path.join(REPO_ROOT, "resources");
    assert.deepEqual(pngSize(readFileSync(path.join(resources, "icon.png"))), [512, 512]);
    assert.deepEqual(pngSize(readFileSync(path.join(resources, "icon@2x.png"))), [1024, 1024]);
    for (const size of [16, 24, 32, 48, 64, 128, 256, 512, 1024]) assert.deepEqual(pngSize(readFileSync(path.join(resources, "icons", `${size}x${size}.png`))), [size, size]);

    const ico = readFileSync(path.join(resources, "icon.ico"));
    assert.deepEqual([ico.readUInt16LE(0), ico.readUInt16LE(2)], [0, 1], "an icon resource");
    const icoSizes = Array.from({ length: ico.readUInt16LE(4) }, (_, i) => {
      const entry = 6 + 16 * i;
      const [width] = pngSize(ico.subarray(ico.readUInt32LE(entry + 12), ico.readUInt32LE(entry + 12) + ico.readUInt32LE(entry + 8)));
      assert.equal(ico.readUInt8(entry) || 256, width);
      return width;
    });
    assert.deepEqual(icoSizes, [16, 24, 32, 48, 64, 128, 256]);

    const icns = readFileSync(path.join(resources, "icon.icns"));
    assert.equal(icns.subarray(0, 4).toString("latin1"), "icns");
    assert.equal(icns.readUInt32BE(4), icns.length);
    const types = new Map<string, number>();
    for (let at = 8; at < icns.length; at += icns.readUInt32BE(at + 4)) types.set(icns.subarray(at, at + 4).toString("latin1"), pngSize(icns.subarray(at + 8))[0]!);
    assert.deepEqual(Object.fromEntries(types), { icp4: 16, icp5: 32, icp6: 64, ic07: 128, ic08: 256, ic09: 512, ic10: 1024, ic11: 32, ic12: 64, ic13: 256, ic14: 512 });
  });

  it("unpacks every native binary of the production dependencies from the asar archive", () => {
    const unpacked = matcher(config.asarUnpack as string[]);
    // A dependency's file is packed unless a `files` pattern excludes it (the last pattern matching it decides).
    const rules = (config.files as string[]).filter((p) => p.includes("node_modules")).map((p) => ({ exclude: p.startsWith("!"), match: matcher([p.replace(/^!/, "")]) }));
    const packed = (f: string) => !rules.reduce((excluded, rule) => (rule.match(f) ? rule.exclude : excluded), false);
    const natives = [...productionPackages().keys()].flatMap((dir) => walk(dir)).filter((file) => NATIVE.test(file));
    // What `files` leaves out of the app (LanceDB's optional ONNX embedders) is not packed at all.
    const relative = natives.map((file) => path.relative(REPO_ROOT, file).split(path.sep).join("/")).filter((f) => packed(f));
    assert.equal(packed("node_modules/onnxruntime-node/bin/napi-v3/linux/x64/libonnxruntime.so.1"), false, "ONNX Runtime is not shipped");
    assert.equal(packed("node_modules/@img/sharp-libvips-linux-x64/lib/libvips-cpp.so.8.18.7"), true, "sharp's libvips is shipped");
    assert.ok(relative.some((f) => f.startsWith("node_modules/better-sqlite3/") && f.endsWith(".node")), "better-sqlite3's addon was found");
    assert.ok(relative.some((f) => f.startsWith("node_modules/@node-llama-cpp/")), "node-llama-cpp's prebuilt binaries were found");
    assert.deepEqual(
      relative.filter((f) => !unpacked(f)),
      [],
      "native files left inside the asar",
    );
    assert.equal(unpacked("node_modules/express/index.js"), false, "plain JavaScript stays packed");
  });

  it("packs the app and this platform's llama.cpp binaries, and never a .gguf", () => {
    const files = matcher(config.files as string[]);
    for (const file of ["dist/src-main/main.js", "dist/src-main/preload.cjs", "dist/src-server/index.js", "dist/renderer/index.html", "models/catalog.json", "package.json", "resources/icon.png", "resources/icon@2x.png"])
      assert.equal(files(file), true, file);
    assert.equal(files("node_modules/@node-llama-cpp/linux-x64/bins/linux-x64/llama-addon.node"), true);
    assert.equal(files("node_modules/@node-llama-cpp/linux-x64-cuda/bins/linux-x64-cuda/llama-addon.node"), true);
    assert.equal(files("node_modules/@node-llama-cpp/mac-arm64-metal/bins/mac-arm64-metal/llama-addon.node"), false);
    assert.equal(files("dist/src-main/main.js.map"), false);
    // The llama.cpp built at install: its binaries, every CPU variant and the record the engine
    // reads to load it; not its build tree (object files, CMake cache).
    const build = "node_modules/node-llama-cpp/llama/localBuilds/linux-x64-4x1t225d2ii5d4s512n4b17395l6f3w1o3e2a13";
    for (const shipped of [`${build}/Release/llama-addon.node`, `${build}/Release/libggml-cpu-zen4.so`, `${build}/Release/libggml-cpu-x64.so`, "node_modules/node-llama-cpp/llama/localBuilds/pustaka-build.json"]) assert.equal(files(shipped), true, shipped);
    for (const left of [`${build}/CMakeCache.txt`, `${build}/CMakeFiles/llama-addon.dir/addon/addon.cpp.o`, `${build}/llama.cpp/ggml/src/libggml-base.so`, "node_modules/node-llama-cpp/llama/localBuilds/mac-arm64-x/Release/llama-addon.node"])
      assert.equal(files(left), false, left);
    for (const weights of ["models/sea-lion.gguf", "dist/renderer/tiny.gguf", "resources/x.gguf", "node_modules/node-llama-cpp/test/model.gguf", "dist/a/b/c/UPPER.gguf"])
      assert.equal(files(weights), false, weights);
    const candidates = ["dist", "models", "resources"].flatMap((dir) => {
      try {
        return walk(path.join(REPO_ROOT, dir));
      } catch {
        return [];
      }
    });
    const included = [...candidates, ...[...productionPackages().keys()].flatMap((dir) => walk(dir))].map((f) => path.relative(REPO_ROOT, f)).filter(files);
    assert.ok(included.length > 100, "the walk saw the app");
    assert.deepEqual(
      included.filter((f) => f.toLowerCase().endsWith(".gguf")),
      [],
    );
  });
});
