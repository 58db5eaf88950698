/**
 * The sources behind citations: `GET .../chunks/{chunk_id}` (a passage with the text
 * around it) and `GET .../documents/{doc_id}/content` (the original file, decrypted, for
 * viewers such as pdf.js), `GET .../documents/{doc_id}/pages/{n}/ocr` (the words OCR read on
 * a page, with boxes) and `.../pages/{n}/image` (a page of an image document, as an image).
 * All need `rag.read` and a corpus of the caller's workspace.
 */
import { doc } from "../openapi/route-doc.js";
import { Router } from "express";
import type { SourceService } from "../../rag/answer/source-service.js";
import { principalOf, requireScope } from "../authenticate.js";
import { routeParam } from "../route-param.js";
import { ocrPageObject, pageNumberParam } from "../wire/ocr-wire.js";
import { OcrStatusService } from "../../rag/ocr-status.js";
import { chunkContextObject, ocrStatusObject } from "../wire/rag-wire.js";

export function sourceRoutes(sources: SourceService, ocr: OcrStatusService = new OcrStatusService()): Router {
  const router = Router();
  const read = requireScope("rag.read");
  router.get("/v1/rag/ocr", doc({ summary: "Whether scans and images can be read here (OCR), and in which languages", tag: "Corpora" }), read, async (_req, res) => {
    res.json(ocrStatusObject(await ocr.status()));
  });
  router.post("/v1/rag/ocr/languages/:language", doc({ summary: "Fetch a language's data for the built-in OCR engine (machines without Tesseract)", tag: "Corpora" }), requireScope("workspaces.manage"), async (req, res) => {
    res.json(ocrStatusObject(await ocr.fetchLanguage(routeParam(req, "language"))));
  });
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
  router.get("/v1/rag/corpora/:corpusId/documents/:documentId/pages/:page/ocr", doc({ summary: "The words OCR read on a page, with their boxes", tag: "Grounded answers" }), read, async (req, res) => {
    res.json(ocrPageObject(await sources.ocrPage(principalOf(res.locals), routeParam(req, "corpusId"), routeParam(req, "documentId"), pageNumberParam(req))));
  });
  router.get("/v1/rag/corpora/:corpusId/documents/:documentId/pages/:page/image", doc({ summary: "A page of an image document, as an image", tag: "Grounded answers", response: { contentType: "image/png" } }), read, async (req, res) => {
    const { image } = await sources.pageImage(principalOf(res.locals), routeParam(req, "corpusId"), routeParam(req, "documentId"), pageNumberParam(req));
    res.setHeader("Content-Type", image.contentType);
    res.setHeader("Content-Security-Policy", "sandbox; default-src 'none'");
    res.setHeader("X-Content-Type-Options", "nosniff");
    res.setHeader("Cache-Control", "private, no-store");
    res.send(image.bytes);
  });
  return router;
}
