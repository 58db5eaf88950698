/** Vitest setup: DOM matchers and a clean DOM and storage between tests. */
import "@testing-library/jest-dom/vitest";
import { cleanup } from "@testing-library/react";
import { afterEach } from "vitest";

afterEach(() => {
  cleanup();
  localStorage.clear();
  window.location.hash = "";
});
