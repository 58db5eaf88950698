/**
 * Assembles a `ParsedDocument` block by block, so every parser gets the same
 * invariants: blocks joined with "\n\n", `text.slice(start, end) === block.text`.
 */
import { ParseError, type Block, type DocumentFormat, type ParsedDocument } from "./types.js";

/** Blocks are joined with this separator in `ParsedDocument.text`. */
export const BLOCK_SEPARATOR = "\n\n";

export interface BlockInput {
  kind: Block["kind"];
  text: string;
  /** Headings only: 1 to 6 (clamped). */
  level?: number;
  /** 1-based page (PDF); omitted or null for formats without pages. */
  page?: number | null;
}

export interface DocumentMeta {
  format: DocumentFormat;
  title?: string | null;
  pageCount?: number | null;
  warnings?: string[];
}

/** Collects blocks and builds the document text with exact offsets. */
export class DocumentBuilder {
  readonly #blocks: Block[] = [];
  readonly #parts: string[] = [];
  #length = 0;

  /** Characters of text so far (separators included). */
  get length(): number {
    return this.#length;
  }

  get blockCount(): number {
    return this.#blocks.length;
  }

  /**
   * Adds a block. Text is trimmed (code keeps its indentation, only blank lines
   * around it go); a block that ends up empty is skipped (null).
   */
  add(input: BlockInput): Block | null {
    const text = input.kind === "code" ? input.text.replace(/^(?:[ \t]*\n)+/, "").trimEnd() : input.text.trim();
    if (text === "") return null;
    if (this.#parts.length > 0) {
      this.#parts.push(BLOCK_SEPARATOR);
      this.#length += BLOCK_SEPARATOR.length;
    }
    const start = this.#length;
    this.#parts.push(text);
    this.#length += text.length;
    const block: Block = { kind: input.kind, text, page: input.page ?? null, start, end: this.#length };
    if (input.kind === "heading") block.level = Math.min(6, Math.max(1, Math.round(input.level ?? 1)));
    this.#blocks.push(block);
    return block;
  }

  /**
   * Builds the document.
   * @throws ParseError `empty_document` when no block has any text.
   */
  build(meta: DocumentMeta): ParsedDocument {
    if (this.#blocks.length === 0) throw new ParseError("empty_document", "The document contains no text.");
    return {
      format: meta.format,
      text: this.#parts.join(""),
      blocks: this.#blocks.slice(),
      pageCount: meta.pageCount ?? null,
      title: meta.title?.trim() || null,
      warnings: meta.warnings ?? [],
    };
  }
}

/**
 * Runs a synchronous parser step as a promise: a throw becomes a rejection, so
 * callers of `(bytes) => Promise<ParsedDocument>` never see a synchronous throw.
 */
export function promiseOf<T>(compute: () => T): Promise<T> {
  return new Promise((resolve) => resolve(compute()));
}
