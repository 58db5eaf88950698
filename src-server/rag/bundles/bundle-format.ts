/**
 * The corpus bundle (issue 35): one file that carries a corpus from one Pustaka to another
 * that shares no network with it.
 *
 *   age (a passphrase through scrypt, or the receiving instance's X25519 recipient)
 *   └─ tar
 *        bundle.json             what the file is (format and version): first, so a foreign
 *                                file is told apart before anything else is read
 *        corpus.json             settings and search defaults
 *        documents/000001.jsonl  the documents (names, types, hashes, pages, links, OCR summary)
 *        originals/<doc id>      each original, as uploaded
 *        passages/000001.jsonl   passages with their offsets, pages, headings and context line
 *        vectors/000001.f32      their vectors (float32, little-endian, one row per passage of
 *                                the part of the same number)
 *        ocr/<doc id>.jsonl      the words and boxes OCR read on a document's pages
 *        manifest.json           provenance, the embedding model (name, sha256), and every
 *                                entry's size and sha256, signed with the exporting
 *                                instance's Ed25519 key: last, as only then are the hashes known
 *
 * Everything that grows with the corpus is cut into parts of at most `PART_BYTES`, so neither
 * side holds more than a part (or one original) in memory. The keyword index is not carried:
 * it is made again from the passages' text, which costs little; the vectors are, because
 * embedding is what costs.
 */
import { z } from "zod";

export const BUNDLE_FORMAT = "pustaka-corpus-bundle";
export const BUNDLE_VERSION = 1;
/** The file name extension the workbench and the CLI suggest. */
export const BUNDLE_EXTENSION = ".pustaka";

export const FORMAT_ENTRY = "bundle.json";
export const CORPUS_ENTRY = "corpus.json";
export const MANIFEST_ENTRY = "manifest.json";
/** A part of rows (documents, passages, vectors) is cut once it passes this size. */
export const PART_BYTES = 4 * 1024 * 1024;
/** The largest entry a reader buffers (a part, the manifest); originals stream. */
export const MAX_BUFFERED_ENTRY = 64 * 1024 * 1024;

export const partName = (kind: "documents" | "passages" | "vectors", n: number) => `${kind}/${String(n).padStart(6, "0")}.${kind === "vectors" ? "f32" : "jsonl"}`;
export const originalName = (documentId: string) => `originals/${documentId}`;
export const ocrName = (documentId: string) => `ocr/${documentId}.jsonl`;

/** Entry names a reader accepts: anything else (a path with `..`, an absolute one) is refused. */
export const ENTRY_NAME = /^(?:bundle\.json|corpus\.json|manifest\.json|(?:documents|passages)\/\d{6}\.jsonl|vectors\/\d{6}\.f32|originals\/doc_[A-Za-z0-9]{1,64}|ocr\/doc_[A-Za-z0-9]{1,64}\.jsonl)$/;

const sha256 = z.string().regex(/^[0-9a-f]{64}$/);
const id = z.string().regex(/^doc_[A-Za-z0-9]{1,64}$/);

export const FormatEntrySchema = z.object({ format: z.literal(BUNDLE_FORMAT), version: z.number().int() }).strict();

export const CorpusEntrySchema = z
  .object({
    id: z.string().min(1).max(64),
    name: z.string().min(1).max(200),
    chunking: z.enum(["semantic", "paragraph", "fixed"]),
    dimensions: z.number().int().positive().max(65536),
    embedding_prompts: z.object({ query: z.string().max(1000), document: z.string().max(1000) }).strict(),
    rerank_model: z.string().max(200).nullable(),
    search_defaults: z.record(z.string(), z.unknown()).nullable(),
    ocr_languages: z.array(z.string().max(32)).max(32).nullable(),
    retention_days: z.number().int().min(0),
    metadata: z.record(z.string(), z.string()),
    created_at: z.number().int(),
  })
  .strict();
export type CorpusEntry = z.infer<typeof CorpusEntrySchema>;

const ocrPageSummary = z.object({ page: z.number().int().positive(), reason: z.string().max(64), confidence: z.number(), words: z.number().int().min(0), deskewed: z.number().optional() }).strict();

export const DocumentLineSchema = z
  .object({
    id,
    filename: z.string().min(1).max(1024),
    content_type: z.string().max(255),
    format: z.string().min(1).max(32),
    bytes: z.number().int().min(0),
    sha256,
    status: z.enum(["indexed", "failed"]),
    error: z.object({ code: z.string().max(64), message: z.string().max(4000) }).strict().nullable(),
    page_count: z.number().int().min(0).nullable(),
    chunk_count: z.number().int().min(0),
    metadata: z.record(z.string(), z.unknown()),
    created_at: z.number().int(),
    indexed_at: z.number().int().nullable(),
    parent_document_id: id.nullable(),
    relation: z.enum(["attachment", "message"]).nullable(),
    position: z.number().int().min(0).nullable(),
    ocr: z.object({ engine: z.string().max(200), languages: z.array(z.string().max(32)).max(32), pages: z.array(ocrPageSummary).max(100_000) }).strict().nullable(),
  })
  .strict();
export type DocumentLine = z.infer<typeof DocumentLineSchema>;

export const PassageLineSchema = z
  .object({
    document_id: id,
    index: z.number().int().min(0),
    start: z.number().int().min(0),
    end: z.number().int().min(0),
    page_start: z.number().int().positive().nullable(),
    page_end: z.number().int().positive().nullable(),
    token_count: z.number().int().min(0),
    text: z.string().max(1_000_000),
    heading_path: z.array(z.string().max(10_000)).max(64),
    page_breaks: z.array(z.tuple([z.number().int().min(0), z.number().int().positive()])).max(100_000).optional(),
    context: z.string().max(10_000).optional(),
  })
  .strict();
export type PassageLine = z.infer<typeof PassageLineSchema>;

export const OcrPageLineSchema = z
  .object({
    page: z.number().int().positive(),
    width: z.number().int().positive(),
    height: z.number().int().positive(),
    /** `[text, left, top, width, height, confidence]` per word (`rag/ocr-codec.ts`). */
    words: z.array(z.tuple([z.string().max(10_000), z.number(), z.number(), z.number(), z.number(), z.number()])).max(1_000_000),
  })
  .strict();
export type OcrPageLine = z.infer<typeof OcrPageLineSchema>;

export const ManifestEntrySchema = z.object({ name: z.string().regex(ENTRY_NAME), bytes: z.number().int().min(0), sha256 }).strict();
export type ManifestEntry = z.infer<typeof ManifestEntrySchema>;

export const ManifestSchema = z
  .object({
    format: z.literal(BUNDLE_FORMAT),
    version: z.number().int(),
    created_at: z.number().int(),
    source: z
      .object({
        /** The exporting instance's signing key (`ed25519:` + 16 hex digits of its SPKI's SHA-256). */
        instance: z.string().max(64),
        /** Who asked for the export (a key id, a service account, a session user). */
        exported_by: z.string().max(200),
        app_version: z.string().max(64),
      })
      .strict(),
    corpus: z.object({ id: z.string().max(64), name: z.string().max(200) }).strict(),
    embedding_model: z
      .object({
        /** The name the exporting instance knew it by. */
        name: z.string().max(200),
        /** Of the GGUF file; null for a model served by upstream servers (it cannot be checked). */
        sha256: sha256.nullable(),
        dimensions: z.number().int().positive(),
      })
      .strict(),
    counts: z.object({ documents: z.number().int().min(0), passages: z.number().int().min(0), original_bytes: z.number().int().min(0) }).strict(),
    entries: z.array(ManifestEntrySchema).max(10_000_000),
    key_id: z.string().max(64),
    public_key: z.string().max(200),
    signature: z.string().max(200),
  })
  .strict();
export type Manifest = z.infer<typeof ManifestSchema>;
export type UnsignedManifest = Omit<Manifest, "key_id" | "public_key" | "signature">;
