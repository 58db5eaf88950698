/** Desktop app: says when the local server is starting, restarting or has failed. */
import { useEffect, useState } from "react";
import { getBridge, type ServerState } from "../api/bridge.js";
import { useI18n } from "../i18n/i18n.js";

export function ServerStateBanner() {
  const { t } = useI18n();
  const [state, setState] = useState<ServerState | null>(null);
  useEffect(() => getBridge()?.onServerState(setState), []);
  if (!state || state.state === "ready") return null;
  const bad = state.state === "crashed" || state.state === "failed";
  return (
    <div className={bad ? "banner banner-danger" : "banner banner-info"} role="status" aria-live="polite">
      <strong>{t(`server.${state.state}`)}</strong>
      {state.detail && <span className="banner-detail">{state.detail}</span>}
    </div>
  );
}
