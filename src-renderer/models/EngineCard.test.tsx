import { screen } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import type { Health } from "../api/contract.js";
import { renderWithApp } from "../test-utils/render.js";
import { EngineCard } from "./EngineCard.js";

const health = (build: NonNullable<Health["engine"]["build"]> | null): Health => ({
  status: "ok",
  version: "0.1.0",
  engine: { backend: "llama.cpp (node-llama-cpp)", gpu: false, threads: 2, build, loadedModels: [] },
});

describe("EngineCard", () => {
  it("names the llama.cpp build, the CPU kernels it picked and why", () => {
    renderWithApp(<EngineCard health={health({ type: "local", variant: "zen4", reason: "llama.cpp v0.5.0 built at install (portable; self-test passed on the zen4 CPU variant)" })} error={null} />);
    const card = screen.getByRole("region", { name: "Engine" });
    expect(card).toHaveTextContent("Built and tested on this computer · zen4 CPU kernels");
    expect(card).toHaveTextContent("self-test passed on the zen4 CPU variant");
    // The server's reason is English whatever the UI language; the build's line has no tooltip repeating it.
    expect(screen.getByText(/self-test passed/)).toHaveAttribute("lang", "en");
    expect(screen.getByText(/Built and tested/)).not.toHaveAttribute("title");
  });

  it("says when the prebuilt binaries serve because the install's build failed its self-test", () => {
    renderWithApp(<EngineCard health={health({ type: "prebuilt", variant: null, reason: "the install's build failed its self-test: llama.cpp died (SIGILL)" })} error={null} />);
    const card = screen.getByRole("region", { name: "Engine" });
    expect(card).toHaveTextContent("Prebuilt binaries");
    expect(card).not.toHaveTextContent("CPU kernels");
    expect(card).toHaveTextContent("failed its self-test: llama.cpp died (SIGILL)");
  });

  it("leaves the build out for a server that does not report it", () => {
    renderWithApp(<EngineCard health={health(null)} error={null} />);
    expect(screen.getByRole("region", { name: "Engine" })).not.toHaveTextContent(/Built and tested|Prebuilt binaries/);
  });
});
