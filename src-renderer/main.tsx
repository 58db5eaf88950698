/** Entry point: one API client for this environment (desktop bridge or browser session). */
import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { clientFromEnvironment } from "./api/api-context.js";
import { App } from "./App.js";
import "./styles/tokens.css";
import "./styles/base.css";
import "./styles/components.css";

const root = document.getElementById("root");
if (root) {
  createRoot(root).render(
    <StrictMode>
      <App client={clientFromEnvironment()} />
    </StrictMode>,
  );
}
