#!/usr/bin/env node
// Renders resources/icon.svg into the app icons the packaging targets need, with Debian's
// Chromium (through playwright-core): resources/icon.png (512) and icon@2x.png (1024), resources/icons/NxN.png
// (Linux, 16–1024), resources/icon.ico (Windows, 16–256, PNG entries) and
// resources/icon.icns (macOS, 16–1024, PNG entries).
// Usage: node scripts/make-icons.mjs   (needs `apt-get install chromium`)
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { chromium } from "playwright-core";

const root = path.resolve(import.meta.dirname, "..");
const resources = path.join(root, "resources");
const svg = readFileSync(path.join(resources, "icon.svg"), "utf8");

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"],
});
const png = new Map();
try {
  const page = await browser.newPage({ deviceScaleFactor: 1 });
  for (const size of [16, 24, 32, 48, 64, 128, 256, 512, 1024]) {
    await page.setViewportSize({ width: size, height: size });
    const sized = svg.replace("<svg ", `<svg width="${size}" height="${size}" `);
    await page.setContent(`<!doctype html><html><body style="margin:0;background:transparent">${sized}</body></html>`);
    png.set(size, await page.locator("svg").screenshot({ omitBackground: true, type: "png" }));
  }
} finally {
  await browser.close();
}

mkdirSync(path.join(resources, "icons"), { recursive: true });
for (const [size, data] of png) writeFileSync(path.join(resources, "icons", `${size}x${size}.png`), data);
// icon.png and its HiDPI twin icon@2x.png (Electron picks the @2x file on HiDPI screens).
writeFileSync(path.join(resources, "icon.png"), png.get(512));
writeFileSync(path.join(resources, "icon@2x.png"), png.get(1024));

/** ICO with PNG-compressed images (Windows Vista and later). */
function ico(sizes) {
  const header = Buffer.alloc(6 + 16 * sizes.length);
  header.writeUInt16LE(0, 0);
  header.writeUInt16LE(1, 2);
  header.writeUInt16LE(sizes.length, 4);
  let offset = header.length;
  sizes.forEach((size, i) => {
    const data = png.get(size);
    const entry = 6 + 16 * i;
    header.writeUInt8(size >= 256 ? 0 : size, entry);
    header.writeUInt8(size >= 256 ? 0 : size, entry + 1);
    header.writeUInt16LE(1, entry + 4);
    header.writeUInt16LE(32, entry + 6);
    header.writeUInt32LE(data.length, entry + 8);
    header.writeUInt32LE(offset, entry + 12);
    offset += data.length;
  });
  return Buffer.concat([header, ...sizes.map((s) => png.get(s))]);
}

/** ICNS with PNG payloads; the @2x types reuse the larger renderings. */
function icns(types) {
  const chunks = types.map(([type, size]) => {
    const data = png.get(size);
    const head = Buffer.alloc(8);
    head.write(type, 0, "ascii");
    head.writeUInt32BE(data.length + 8, 4);
    return Buffer.concat([head, data]);
  });
  const head = Buffer.alloc(8);
  head.write("icns", 0, "ascii");
  head.writeUInt32BE(8 + chunks.reduce((n, c) => n + c.length, 0), 4);
  return Buffer.concat([head, ...chunks]);
}

writeFileSync(path.join(resources, "icon.ico"), ico([16, 24, 32, 48, 64, 128, 256]));
writeFileSync(
  path.join(resources, "icon.icns"),
  icns([
    ["icp4", 16],
    ["icp5", 32],
    ["icp6", 64],
    ["ic07", 128],
    ["ic08", 256],
    ["ic09", 512],
    ["ic10", 1024],
    ["ic11", 32],
    ["ic12", 64],
    ["ic13", 256],
    ["ic14", 512],
  ]),
);
console.log(`icons written to ${path.relative(process.cwd(), resources) || "."}`);
