/**
 * The Ollama-compatible listener through the admin API (`workspaces.manage`, checked by the
 * service): read its state, open (or move) it, close it. Opening and closing are audited in
 * the chain of the bound key's workspace.
 */
import { Router, type Response } from "express";
import type { OllamaListenerService } from "../../admin/ollama-listener-service.js";
import type { OllamaListenerSetting } from "../../store/ollama-listener-store.js";
import { principalOf } from "../authenticate.js";
import type { Trail } from "../audit-trail.js";
import { jsonBody } from "../json-body.js";
import { doc } from "../openapi/route-doc.js";
import { ollamaListenerObject, OpenOllamaListenerSchema } from "../wire/ollama-listener-wire.js";

const PATH = "/v1/admin/ollama-listener";

export function ollamaListenerRoutes(listener: OllamaListenerService, trail: Trail): Router {
  const router = Router();
  /** The facts of a change, in the chain of the workspace whose key it lends (or lent). */
  const facts = (res: Response, workspaceId: string | undefined, data: Record<string, unknown>) => {
    if (!res.locals.audit) return;
    if (workspaceId) res.locals.audit.workspaceId = workspaceId;
    Object.assign(res.locals.audit.data, data);
  };
  const was = (previous: OllamaListenerSetting | null) => (previous ? { previous_key_id: previous.keyId, previous_port: previous.port } : {});

  router.get(PATH, doc({ summary: "The Ollama-compatible listener on 127.0.0.1: open or not, its address, and the key it acts as", tag: "Administration" }), async (_req, res) => {
    res.json(ollamaListenerObject(await listener.state(principalOf(res.locals))));
  });
  router.post(PATH, doc({ summary: "Open the Ollama-compatible listener on 127.0.0.1 (Ollama's API without a key, acting as one API key), or move it to another key or port", tag: "Administration", body: OpenOllamaListenerSchema }), trail("ollama_listener.open"), async (req, res) => {
    const body = jsonBody(req, OpenOllamaListenerSchema);
    facts(res, undefined, { key_id: body.key_id, port: body.port ?? null });
    const { state, previous } = await listener.open(principalOf(res.locals), { keyId: body.key_id, port: body.port, host: body.host });
    const wire = ollamaListenerObject(state);
    facts(res, state.key?.workspaceId, { key_id: wire.key?.id, key_prefix: wire.key?.prefix, scopes: wire.key?.scopes, port: wire.port, url: wire.url, ...was(previous) });
    res.json(wire);
  });
  router.delete(PATH, doc({ summary: "Close the Ollama-compatible listener (it stays closed after a restart)", tag: "Administration" }), trail("ollama_listener.close"), async (_req, res) => {
    const { state, previous, workspaceId } = await listener.close(principalOf(res.locals));
    facts(res, workspaceId ?? undefined, { was_open: previous !== null, ...was(previous) });
    res.json(ollamaListenerObject(state));
  });
  return router;
}
