/**
 * MCP's error shape on `/mcp`: a JSON-RPC 2.0 error (id null: the message was not read, or
 * was refused before it was), with the HTTP status kept, and on 401/403 the
 * `WWW-Authenticate` challenge the MCP authorization spec asks for, naming the protected
 * resource metadata (RFC 9728) and, for a missing scope, the scope (RFC 6750).
 */
import type { WireError } from "../error-handler.js";

export const MCP_PATH = "/mcp";

/** Paths answered in MCP's shape. */
export const MCP_PATHS = /^\/mcp(\/|$)/i;

/** JSON-RPC error codes (the spec's, and the implementation-defined range for the rest). */
const PARSE_ERROR = -32700;
const INVALID_REQUEST = -32600;
const SERVER_ERROR = -32603;
/** Refused before the message was read: authentication, scope, rate limit, size. */
const REFUSED = -32001;

export interface JsonRpcError {
  jsonrpc: "2.0";
  id: null;
  error: { code: number; message: string; data: { type: string; code: string | null; param: string | null } };
}

export function mcpError(status: number, body: WireError): JsonRpcError {
  const code = body.error.code === "invalid_json" ? PARSE_ERROR : status === 400 ? INVALID_REQUEST : status >= 500 ? SERVER_ERROR : REFUSED;
  return { jsonrpc: "2.0", id: null, error: { code, message: body.error.message, data: { type: body.error.type, code: body.error.code, param: body.error.param } } };
}

export function protectedResourceMetadataUrl(base: string): string {
  return `${base}/.well-known/oauth-protected-resource${MCP_PATH}`;
}

/** The `WWW-Authenticate` challenge for a refused MCP request (null: none for this status). */
export function mcpChallenge(status: number, body: WireError, base: string): string | null {
  const metadata = `resource_metadata="${protectedResourceMetadataUrl(base)}"`;
  if (status === 401) return `Bearer realm="pustaka", ${metadata}`;
  if (status === 403 && body.error.code === "insufficient_scope") {
    const scope = /'([a-z.]+)' scope/.exec(body.error.message)?.[1];
    return `Bearer error="insufficient_scope"${scope ? `, scope="${scope}"` : ""}, ${metadata}`;
  }
  return null;
}
