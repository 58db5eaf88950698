/**
 * MCP over Streamable HTTP at `/mcp`, stateless: each POST carries one JSON-RPC message and
 * is answered by a server built for its caller (`mcp/corpus-mcp-server.ts`), so any replica
 * behind a load balancer can take any message and nothing is kept between them. Behind the
 * API's authentication (API keys and OAuth access tokens as bearer tokens), `rag.read`,
 * the rate limiter and the audit trail (one entry per message; tool arguments as a hash).
 *
 * Discovery, as the MCP authorization spec describes for HTTP: a 401 names the protected
 * resource metadata (RFC 9728), which points at Pustaka's own authorization server.
 */
import { Router, type RequestHandler } from "express";
import { SCOPES } from "../../domain/scopes.js";
import { invalidRequest } from "../../errors.js";
import { principalOf, requireScope } from "../authenticate.js";
import type { Trail } from "../audit-trail.js";
import { doc } from "../openapi/route-doc.js";
import type { CorpusMcpDeps } from "../../mcp/corpus-mcp-server.js";
import { MCP_PATH } from "../wire/mcp-wire.js";

/** The protected resource metadata (public: it is how a client learns where to get a token). */
export function mcpMetadataRoutes(issuer: () => string): Router {
  const router = Router();
  const metadata = () => {
    const base = issuer();
    return {
      resource: `${base}${MCP_PATH}`,
      authorization_servers: [base],
      scopes_supported: SCOPES.filter((s) => s === "rag.read" || s === "inference"),
      bearer_methods_supported: ["header"],
      resource_name: "Pustaka corpora (MCP)",
      resource_documentation: `${base}/v1/openapi.json`,
    };
  };
  router.get(
    ["/.well-known/oauth-protected-resource", `/.well-known/oauth-protected-resource${MCP_PATH}`],
    doc({ summary: "OAuth 2.0 protected resource metadata for the MCP endpoint (RFC 9728)", tag: "MCP", public: true }),
    (_req, res) => {
      res.setHeader("Cache-Control", "public, max-age=300");
      res.json(metadata());
    },
  );
  return router;
}

/** The MCP SDK (and its schema libraries: 25 MB of memory) loads with the first message, not with the server. */
const loadMcp = (() => {
  let modules: ReturnType<typeof load> | undefined;
  const load = () => Promise.all([import("@modelcontextprotocol/sdk/server/streamableHttp.js"), import("../../mcp/corpus-mcp-server.js")]);
  return () => (modules ??= load());
})();

export function mcpRoutes(deps: CorpusMcpDeps, costly: RequestHandler, trail: Trail): Router {
  const router = Router();
  // The tool's arguments (a query, a question) are recorded as their hash only.
  const audit = trail("mcp.request", { digest: { name: "arguments", of: (body) => (body.params as { arguments?: unknown } | undefined)?.arguments ?? null } });
  router.post(
    MCP_PATH,
    doc({ summary: "MCP (Model Context Protocol) over Streamable HTTP: corpora as tools and resources", tag: "MCP", streams: true }),
    audit,
    requireScope("rag.read"),
    costly,
    async (req, res) => {
      // JSON-RPC: an empty batch is an invalid request (the transport would take it as notifications only).
      if (Array.isArray(req.body) && req.body.length === 0) throw invalidRequest("an empty JSON-RPC batch is not a request", "invalid_request");
      const facts = res.locals.audit?.data ?? {};
      const body = req.body as { method?: unknown } | undefined;
      if (typeof body?.method === "string") facts.method = body.method.slice(0, 64);
      const [{ StreamableHTTPServerTransport }, { corpusMcpServer }] = await loadMcp();
      const server = corpusMcpServer(deps, { principal: principalOf(res.locals), admission: res.locals.admission, signal: res.locals.signal, facts });
      // Stateless (no session id): every message stands alone. JSON answers: one message, one response.
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      res.on("close", () => {
        void transport.close();
        void server.close();
      });
      await server.connect(transport);
      await transport.handleRequest(req, res, req.body);
    },
  );
  // No server-initiated stream and no sessions to end: only POST (the spec's answer is 405).
  router.all(MCP_PATH, requireScope("rag.read"), (_req, res) => {
    res.setHeader("Allow", "POST");
    res.status(405).json({ jsonrpc: "2.0", id: null, error: { code: -32000, message: "Method not allowed: this MCP server is stateless; send each JSON-RPC message as a POST." } });
  });
  return router;
}
