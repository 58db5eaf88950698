/**
 * "Connect an agent or editor (MCP)": the MCP URL, which keys can connect and what they
 * reach, and the client configurations filled in with this server's address.
 */
import { Plus } from "lucide-react";
import { useI18n } from "../i18n/i18n.js";
import { CopyButton } from "../ui/CopyButton.js";
import { McpConfigs } from "./McpConfigs.js";
import { McpReach, type McpReachProps } from "./McpReach.js";
import { mcpUrl } from "./mcp-snippets.js";

export interface McpConnectProps extends McpReachProps {
  /** The server's origin (`http://127.0.0.1:7780`). */
  origin: string;
  /** The key just created, while its secret is on screen (it then fills the configurations), else null. */
  fresh: { name: string; secret: string } | null;
  /** Opens the new-key dialog (its default scopes, `inference` and `rag.read`, are what MCP needs). */
  onNewKey: () => void;
}

/** Shown where a key belongs in a configuration when no key was just created. */
export const KEY_PLACEHOLDER = "psk-…";

export function McpConnect({ origin, fresh, onNewKey, keys, currentKeyId }: McpConnectProps) {
  const { t } = useI18n();
  const url = mcpUrl(origin);
  return (
    <section className="section card mcp" aria-labelledby="mcp-title">
      <div className="section-head mcp-head">
        <div className="section-titles">
          <h2 id="mcp-title">{t("mcp.title")}</h2>
          <p className="field-hint">{t("mcp.hint")}</p>
        </div>
        <span className="spacer" />
        <button type="button" className="btn" onClick={onNewKey}>
          <Plus aria-hidden="true" size={16} /> {t("mcp.newKey")}
        </button>
      </div>
      <div className="base-url">
        <code className="base-url-value">{url}</code>
        <CopyButton text={url} label={t("mcp.copyUrl")} />
      </div>
      <McpReach keys={keys} currentKeyId={currentKeyId} />
      <McpConfigs origin={origin} apiKey={fresh?.secret ?? KEY_PLACEHOLDER} freshKeyName={fresh?.name ?? null} />
    </section>
  );
}
