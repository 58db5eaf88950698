/** The MCP client configurations (Claude Desktop, VS Code, Cursor, LM Studio) as tabs, each with its file and a copy button. */
import { Tabs } from "radix-ui";
import { useI18n } from "../i18n/i18n.js";
import { CopyButton } from "../ui/CopyButton.js";
import { MCP_CLIENTS, mcpConfigText, type McpInput } from "./mcp-snippets.js";

export interface McpConfigsProps extends McpInput {
  /** The name of the just-created key whose secret `apiKey` is; null when `apiKey` is a placeholder. */
  freshKeyName: string | null;
}

export function McpConfigs({ origin, apiKey, freshKeyName }: McpConfigsProps) {
  const { t } = useI18n();
  return (
    <div className="section">
      <h3 className="mcp-subtitle">{t("mcp.configsTitle")}</h3>
      <p className="field-hint">{freshKeyName ? t("mcp.keyFilled", { name: freshKeyName }) : t("mcp.keyPlaceholder", { placeholder: apiKey })}</p>
      <Tabs.Root defaultValue={MCP_CLIENTS[0]!.client} className="snippets">
        <Tabs.List className="tabs-list" aria-label={t("mcp.configsTitle")}>
          {MCP_CLIENTS.map(({ client, label }) => (
            <Tabs.Trigger key={client} value={client} className="tab">
              {label}
            </Tabs.Trigger>
          ))}
        </Tabs.List>
        {MCP_CLIENTS.map(({ client, label, file }) => {
          const code = mcpConfigText(client, { origin, apiKey });
          return (
            <Tabs.Content key={client} value={client} className="snippet mcp-config">
              <p className="mcp-file">
                {t("mcp.pasteInto")} <code className="mcp-file-name">{file}</code>
                <span className="muted"> — {t(`mcp.note.${client}`)}</span>
              </p>
              <div className="mcp-code">
                <pre className="code-block">{code}</pre>
                <div className="snippet-copy">
                  <CopyButton text={code} label={t("mcp.copyConfig", { client: label })} />
                </div>
              </div>
            </Tabs.Content>
          );
        })}
      </Tabs.Root>
    </div>
  );
}
