/**
 * OCR'd pages' words and boxes (sealed by the caller under the corpus key), one row per page,
 * written with their document's commit (`ChunkStore.commitDocuments`) and deleted with it.
 */
import type { Sql, SqlDatabase } from "./sql-database.js";

export interface SealedOcrPage {
  page: number;
  /** The page image's size in pixels, which the words' boxes refer to. */
  width: number;
  height: number;
  /** The words, sealed (`rag/ocr-codec.ts`). */
  words: Buffer;
}

/** Rows a multi-row insert carries (5 parameters each; far below both databases' limits). */
const INSERT_ROWS = 1000;

/** Replaces a document's OCR'd pages (inside the caller's transaction: its commit); `fresh`: none are there. */
export async function replaceOcrPages(tx: Sql, documentId: string, pages: SealedOcrPage[], options: { fresh?: boolean } = {}): Promise<void> {
  if (!options.fresh) await tx.deleteFrom("document_ocr_pages").where("document_id", "=", documentId).execute();
  for (let i = 0; i < pages.length; i += INSERT_ROWS) {
    const rows = pages.slice(i, i + INSERT_ROWS).map((p) => ({ document_id: documentId, page: p.page, width: p.width, height: p.height, words: p.words }));
    await tx.insertInto("document_ocr_pages").values(rows).execute();
  }
}

export class OcrPageStore {
  constructor(private readonly store: SqlDatabase) {}

  /** One OCR'd page of a document, or undefined when OCR did not read that page. */
  async page(documentId: string, page: number): Promise<SealedOcrPage | undefined> {
    const row = await this.store.db.selectFrom("document_ocr_pages").selectAll().where("document_id", "=", documentId).where("page", "=", page).executeTakeFirst();
    return row ? { page: Number(row.page), width: Number(row.width), height: Number(row.height), words: row.words } : undefined;
  }
}
