/** Corpus bundles on the wire: export options, the import preview, commit options (issue 35). */
import { z } from "zod";
import type * as Api from "../../contract/index.js";
import type { ImportPreview } from "../../rag/bundles/bundle-service.js";

/** `POST /v1/rag/corpora/{id}/export`: a passphrase, or one or more age recipients (`age1…`). */
export const ExportBundleSchema = z
  .object({
    passphrase: z.string().min(1).max(1024).optional().describe("Encrypts the bundle for whoever knows it (scrypt, as age does); 12 characters at least"),
    recipients: z.array(z.string().min(1).max(200)).min(1).max(20).optional().describe("age X25519 recipients (age1…): each can open the bundle with its own key (GET /v1/rag/bundles/recipient on the receiving instance)"),
  })
  .strict()
  .refine((b) => (b.passphrase === undefined) !== (b.recipients === undefined), { message: "give either 'passphrase' or 'recipients'" });

/** `POST /v1/rag/bundles/imports/{id}/commit`. */
export const CommitImportSchema = z
  .object({
    passphrase: z.string().min(1).max(1024).optional().describe("The bundle's passphrase again (the server keeps none); not needed for a bundle made for this instance"),
    expected_signer: z.string().min(1).max(64).optional().describe("The signer's key id the person checked (ed25519:…): a bundle signed by another key is refused"),
    name: z.string().trim().min(1).max(200).optional().describe("The new corpus's name (default: the bundle's)"),
    embedding_model: z.string().min(1).max(200).optional().describe("A local embedding model to index the documents with again, when the bundle's model is not here"),
  })
  .strict();

export const bundleImportObject = (p: ImportPreview): Api.BundleImport => ({
  id: p.id,
  object: "rag.bundle_import",
  status: p.status,
  bytes: p.bytes,
  created_at: p.createdAt,
  expires_at: p.expiresAt,
  signer: { key_id: p.signer.keyId, public_key: p.signer.publicKey },
  source: { instance: p.source.instance, exported_by: p.source.exported_by, exported_at: p.source.exportedAt, app_version: p.source.app_version, corpus_name: p.source.corpusName },
  counts: p.counts,
  embedding_model: p.embeddingModel,
  encrypted_for: p.encryptedFor,
});
