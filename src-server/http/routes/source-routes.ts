/**
 * The sources behind citations: `GET .../chunks/{chunk_id}` (a passage with the text
 * around it) and `GET .../documents/{doc_id}/content` (the original file, decrypted, for
 * viewers such as pdf.js). Both need `rag.read` and a corpus of the caller's workspace.
 */
import { doc } from "../openapi/route-doc.js";
import { Router } from "express";
import type { SourceService } from "../../rag/answer/source-service.js";
import { principalOf, requireScope } from "../authenticate.js";
import { routeParam } from "../route-param.js";
import { chunkContextObject } from "../wire/rag-wire.js";

export function sourceRoutes(sources: SourceService): Router {
  const router = Router();
  const read = requireScope("rag.read");
  router.get("/v1/rag/corpora/:corpusId/chunks/:chunkId", doc({ summary: "One cited passage with its context", tag: "Grounded answers" }), read, async (req, res) => {
    res.json(chunkContextObject(await sources.passage(principalOf(res.locals), routeParam(req, "corpusId"), routeParam(req, "chunkId"))));
  });
  router.get("/v1/rag/corpora/:corpusId/documents/:documentId/content", doc({ summary: "A document's original file (for the viewer)", tag: "Grounded answers", response: { contentType: "application/octet-stream" } }), read, async (req, res) => {
    const { document, bytes } = await sources.original(principalOf(res.locals), routeParam(req, "corpusId"), routeParam(req, "documentId"));
    res.setHeader("Content-Type", document.contentType);
    // Never rendered by the browser as a page of this origin: a download, sandboxed if opened.
    res.setHeader("Content-Disposition", `attachment; filename="document"; filename*=UTF-8''${encodeURIComponent(document.filename)}`);
    res.setHeader("Content-Security-Policy", "sandbox; default-src 'none'");
    res.setHeader("X-Content-Type-Options", "nosniff");
    res.setHeader("Cache-Control", "private, no-store");
    res.send(bytes);
  });
  return router;
}
