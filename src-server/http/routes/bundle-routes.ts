/**
 * Corpus bundles (issue 35): export a corpus as one signed, encrypted file; import one in two
 * steps (receive and verify, then commit after the person compared the signer). The work is
 * `BundleService`'s; this maps HTTP to it.
 */
import { pipeline } from "node:stream/promises";
import { Router } from "express";
import type * as Api from "../../contract/index.js";
import type { BundleService } from "../../rag/bundles/bundle-service.js";
import type { CorpusService } from "../../rag/corpus-service.js";
import { principalOf, requireScope } from "../authenticate.js";
import type { Trail } from "../audit-trail.js";
import { receiveBundle } from "../bundle-upload.js";
import { jsonBody } from "../json-body.js";
import { doc } from "../openapi/route-doc.js";
import { routeParam } from "../route-param.js";
import { CommitImportSchema, ExportBundleSchema, bundleImportObject } from "../wire/bundle-wire.js";
import { corpusObject } from "../wire/rag-wire.js";

export interface BundleRouteDeps {
  bundles: BundleService;
  corpora: CorpusService;
  trail: Trail;
}

export function bundleRoutes({ bundles }: BundleRouteDeps): Router {
  const router = Router();
  const read = requireScope("rag.read");
  const write = requireScope("rag.write");

  router.post("/v1/rag/corpora/:corpusId/export", doc({ summary: "Export a corpus as a signed, encrypted bundle (streamed: originals, passages, vectors, settings, provenance)", tag: "Bundles", body: ExportBundleSchema }), read, async (req, res) => {
    const body = jsonBody(req, ExportBundleSchema);
    const encryption = body.passphrase !== undefined ? { passphrase: body.passphrase } : { recipients: body.recipients! };
    const { stream, filename, done } = await bundles.exportCorpus(principalOf(res.locals), routeParam(req, "corpusId"), encryption, res.locals.requestId ?? null);
    res.status(200);
    res.setHeader("content-type", "application/vnd.pustaka.bundle");
    res.setHeader("content-disposition", `attachment; filename="${filename}"`);
    res.setHeader("cache-control", "no-store");
    try {
      await pipeline(stream, res);
      await done;
    } catch {
      // The response has begun: all that can be said is a cut-short body (which no reader
      // takes for a bundle: it fails as truncated). The audit trail has the failure.
      res.destroy();
    }
  });

  router.get("/v1/rag/bundles/recipient", doc({ summary: "This instance's age recipient (what a sender encrypts a bundle for) and its signing key", tag: "Bundles" }), read, async (_req, res) => {
    const r = await bundles.recipient();
    const body: Api.BundleRecipient = { object: "rag.bundle_recipient", recipient: r.recipient, signer: { key_id: r.keyId, public_key: r.publicKey } };
    res.json(body);
  });

  router.post("/v1/rag/bundles/imports", doc({ summary: "Receive a corpus bundle and verify it (signature, hashes, model); nothing is imported until it is committed", tag: "Bundles", multipart: { passphrase: "the bundle's passphrase (before the file; not needed for a bundle made for this instance)", file: "the bundle" }, response: { status: 201 } }), write, async (req, res) => {
    const principal = principalOf(res.locals);
    const preview = await receiveBundle(req, (file, fields) => bundles.stage(principal, file, fields, res.locals.requestId ?? null));
    res.status(201).json(bundleImportObject(preview));
  });

  router.get("/v1/rag/bundles/imports/:importId", doc({ summary: "A received bundle: its signer, source, contents and model", tag: "Bundles" }), write, async (req, res) => {
    res.json(bundleImportObject(await bundles.getImport(principalOf(res.locals), routeParam(req, "importId"))));
  });

  router.post("/v1/rag/bundles/imports/:importId/commit", doc({ summary: "Import a received bundle as a new corpus (everything sealed under its own key)", tag: "Bundles", body: CommitImportSchema, response: { status: 201 } }), write, async (req, res) => {
    const body = jsonBody(req, CommitImportSchema);
    const corpus = await bundles.commit(principalOf(res.locals), routeParam(req, "importId"), { passphrase: body.passphrase, expectedSigner: body.expected_signer, name: body.name, embeddingModel: body.embedding_model }, res.locals.requestId ?? null);
    res.status(201).json(corpusObject(corpus));
  });

  router.delete("/v1/rag/bundles/imports/:importId", doc({ summary: "Discard a received bundle", tag: "Bundles" }), write, async (req, res) => {
    const id = routeParam(req, "importId");
    await bundles.discard(principalOf(res.locals), id);
    res.json({ id, object: "rag.bundle_import", deleted: true });
  });

  return router;
}
