/**
 * Packaging (electron-builder): `npm run dist` builds the installers for the platform it
 * runs on: AppImage and deb on Linux, dmg on macOS, NSIS on Windows. electron-builder
 * loads this TypeScript file itself (`--config electron.config.ts`).
 *
 * The app is the compiled code in dist/ (main process, preload, server, workbench), the
 * model catalog, the icon and the production dependencies. No model weights ship: users
 * pull or choose their GGUF files. Native modules stay outside the asar archive, where
 * the operating system can load them.
 */
import type { Configuration } from "electron-builder";

// Placeholders until the project has a public home: deb packages require both.
const HOMEPAGE = "https://pustaka.invalid/";
const MAINTAINER = "Pustaka maintainers <maintainers@pustaka.invalid>";

const config: Configuration = {
  appId: "app.pustaka.desktop",
  productName: "Pustaka",
  executableName: "pustaka",
  copyright: "Copyright © Pustaka contributors",
  directories: { output: "release", buildResources: "resources" },
  extraMetadata: { homepage: HOMEPAGE },
  asar: true,
  files: [
    "dist/**/*",
    "!dist/**/*.map",
    "models/catalog.json",
    "resources/icon.png",
    "resources/icon@2x.png",
    "package.json",
    // node-llama-cpp installs prebuilt binaries for several platforms: ship only the target's
    // (CPU, CUDA, Vulkan or Metal variants of it), as node-llama-cpp's Electron template does.
    "!node_modules/@node-llama-cpp/*/bins/**/*",
    // LanceDB's optional embedding functions (Hugging Face transformers on ONNX Runtime, some
    // 200 MB of native libraries for every platform): Pustaka embeds with llama.cpp.
    "!node_modules/@huggingface/transformers/**/*",
    "!node_modules/onnxruntime-*/**/*",
    "node_modules/@node-llama-cpp/${os}-${arch}*/bins/**/*",
    // The llama.cpp built at install: its binaries (not the build tree) and its record, which
    // the engine reads to load it. `npm run dist` first checks that it is portable (every
    // CPU variant, runtime dispatch, no -march=native code) and passed its self-test:
    // scripts/check-portable-build.mjs.
    "!node_modules/node-llama-cpp/llama/localBuilds/**/*",
    "node_modules/node-llama-cpp/llama/localBuilds/${os}-${arch}*/Release/**/*",
    "node_modules/node-llama-cpp/llama/localBuilds/pustaka-build.json",
    // Never model weights, wherever they would come from.
    "!**/*.gguf",
  ],
  asarUnpack: [
    "node_modules/better-sqlite3/**/*",
    "node_modules/node-llama-cpp/**/*",
    "node_modules/@node-llama-cpp/**/*",
    "node_modules/@lancedb/**/*",
    // Native helpers of production dependencies: pdf.js's canvas (pages rendered for OCR), node-llama-cpp's downloader.
    "node_modules/@napi-rs/**/*",
    // sharp's libvips (images read by OCR) and its addon; the built-in OCR engine (tesseract.js
    // runs its WebAssembly in a worker thread, which reads the files from disk, not the archive).
    "node_modules/@img/**/*",
    "node_modules/tesseract.js/**/*",
    "node_modules/tesseract.js-core/**/*",
    "node_modules/@reflink/**/*",
    "**/*.node",
  ],
  // better-sqlite3 is rebuilt against Electron's Node ABI (the prebuilt llama.cpp and LanceDB binaries use N-API).
  npmRebuild: true,
  linux: {
    target: ["AppImage", "deb"],
    icon: "resources/icons",
    category: "Office",
    synopsis: "Local AI workbench: answers from your documents, with citations, offline",
    description: "Pustaka runs GGUF models on your machine and answers questions from your own documents with citations. It also serves an OpenAI-compatible API on localhost.",
    maintainer: MAINTAINER,
  },
  mac: {
    target: ["dmg"],
    icon: "resources/icon.icns",
    category: "public.app-category.productivity",
    hardenedRuntime: true,
  },
  win: {
    target: ["nsis"],
    icon: "resources/icon.ico",
  },
  nsis: {
    oneClick: false,
    perMachine: false,
    allowToChangeInstallationDirectory: true,
    // An analyst's corpora and keys outlive a reinstall.
    deleteAppDataOnUninstall: false,
  },
};

export default config;
