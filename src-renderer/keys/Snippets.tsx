/** curl, the Python openai client and LangChain, ready to paste. */
import { Tabs } from "radix-ui";
import { useI18n } from "../i18n/i18n.js";
import { CopyButton } from "../ui/CopyButton.js";
import { snippet, type SnippetInput, type SnippetKind } from "./snippets.js";

const KINDS: { kind: SnippetKind; label: string }[] = [
  { kind: "curl", label: "curl" },
  { kind: "python", label: "Python (openai)" },
  { kind: "langchain", label: "LangChain" },
];

export function Snippets(input: SnippetInput) {
  const { t } = useI18n();
  return (
    <section className="section" aria-labelledby="snippets-title">
      <div className="section-head">
        <h2 id="snippets-title">{t("snippets.title")}</h2>
        <p>{t("snippets.hint", { model: input.model })}</p>
      </div>
      <Tabs.Root defaultValue="curl" className="snippets">
        <Tabs.List className="tabs-list" aria-label={t("snippets.title")}>
          {KINDS.map(({ kind, label }) => (
            <Tabs.Trigger key={kind} value={kind} className="tab">
              {label}
            </Tabs.Trigger>
          ))}
        </Tabs.List>
        {KINDS.map(({ kind }) => {
          const code = snippet(kind, input);
          return (
            <Tabs.Content key={kind} value={kind} className="snippet">
              <pre className="code-block">{code}</pre>
              <div className="snippet-copy">
                <CopyButton text={code} />
              </div>
            </Tabs.Content>
          );
        })}
      </Tabs.Root>
    </section>
  );
}
