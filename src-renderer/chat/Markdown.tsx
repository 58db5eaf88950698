/**
 * Model output as Markdown, rendered safely: no raw HTML (react-markdown escapes it and
 * we add no rehype-raw), links only for http(s) opening outside, images not loaded,
 * and `[n]` citation markers as buttons.
 */
import { memo, useMemo, type ReactNode } from "react";
import ReactMarkdown, { type Components, type Options } from "react-markdown";
import remarkGfm from "remark-gfm";
import { remarkCitations } from "./remark-citations.js";
import { safeHref } from "./safe-link.js";

export interface MarkdownProps {
  text: string;
  /** Citation indexes the answer may refer to; others stay plain text. */
  citationIndexes?: readonly number[];
  onCitation?: (index: number) => void;
  citationLabel?: (index: number) => string;
}

function MarkdownImpl({ text, citationIndexes = [], onCitation, citationLabel }: MarkdownProps) {
  const key = citationIndexes.join(",");
  const plugins = useMemo<NonNullable<Options["remarkPlugins"]>>(() => [remarkGfm, [remarkCitations, { indexes: key ? key.split(",").map(Number) : [] }]], [key]);
  const components = useMemo<Components>(
    () => ({
      a: ({ href, children }) => {
        const safe = safeHref(href);
        if (!safe) return <span className="md-link-dropped">{children}</span>;
        return (
          <a href={safe} target="_blank" rel="noopener noreferrer">
            {children}
          </a>
        );
      },
      img: ({ alt }) => <span className="md-image">{alt ? `[${alt}]` : "[image]"}</span>,
      sup: ({ node, children }) => {
        const cite = node?.properties?.dataCite;
        if (cite === undefined) return <sup>{children}</sup>;
        const index = Number(cite);
        return (
          <button type="button" className="cite-chip" onClick={() => onCitation?.(index)} aria-label={citationLabel?.(index)}>
            {index}
          </button>
        );
      },
      table: ({ children }): ReactNode => (
        <div className="md-table">
          <table>{children}</table>
        </div>
      ),
    }),
    [onCitation, citationLabel],
  );
  return (
    <div className="markdown">
      <ReactMarkdown remarkPlugins={plugins} components={components}>
        {text}
      </ReactMarkdown>
    </div>
  );
}

export const Markdown = memo(MarkdownImpl);
