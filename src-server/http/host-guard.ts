/**
 * DNS-rebinding guard: a browser page on another origin can reach 127.0.0.1 only
 * through a hostname it controls, so requests whose `Host` is not ours are refused.
 * The header is parsed strictly (RFC 9110 §7.2, `uri-host [":" port]`): a request
 * without exactly one well-formed `Host` is refused with 400 `invalid_host_header`
 * (RFC 9112 §3.2 asks for 400); a well-formed one that is not ours with 403
 * `host_not_allowed`.
 */
import { isIP } from "node:net";
import type { Request, RequestHandler } from "express";
import { ServiceError } from "../errors.js";
import { sendError } from "./error-handler.js";

const LOOPBACK = ["localhost", "127.0.0.1", "::1"];

/** A registered name or IPv4 address: dot-separated labels, an optional final dot. */
const REG_NAME = /^[a-z0-9_-]+(?:\.[a-z0-9_-]+)*\.?$/;
const PORT = /^:(\d{1,5})$/;

/** A `Host` header's parts: the name in lower case (IPv6 without brackets) and the port, if any. */
export interface ParsedHost {
  hostname: string;
  port: number | null;
}

/**
 * Parses a `Host` header strictly: a bracketed IPv6 literal or a host name / IPv4
 * address, optionally followed by `:port`, and nothing else. Null when it is not that.
 */
export function parseHost(value: string): ParsedHost | null {
  const host = value.toLowerCase();
  let hostname: string;
  let rest: string;
  if (host.startsWith("[")) {
    const end = host.indexOf("]");
    if (end < 0) return null;
    hostname = host.slice(1, end);
    if (isIP(hostname) !== 6) return null;
    rest = host.slice(end + 1);
  } else {
    const colon = host.indexOf(":");
    hostname = colon < 0 ? host : host.slice(0, colon);
    rest = colon < 0 ? "" : host.slice(colon);
    if (hostname.length > 253 || !REG_NAME.test(hostname)) return null;
  }
  if (rest === "") return { hostname, port: null };
  const port = PORT.exec(rest);
  if (!port || Number(port[1]) > 65535) return null;
  return { hostname, port: Number(port[1]) };
}

/** A configured host name (`pustaka.lan`, `::1`, `[::1]`, `name:port`) as the guard compares it. */
export function hostnameOf(configured: string): string {
  const name = configured.trim().toLowerCase();
  if (isIP(name) === 6) return name;
  return parseHost(name)?.hostname ?? name;
}

/** The values of every `Host` header line the request carried (Node keeps only the first in `headers`). */
function hostLines(req: Request): string[] {
  const lines: string[] = [];
  for (let i = 0; i < req.rawHeaders.length; i += 2) if (req.rawHeaders[i]!.toLowerCase() === "host") lines.push(req.rawHeaders[i + 1]!);
  return lines;
}

export function hostGuard(boundHost: string, extra: readonly string[]): RequestHandler {
  const wildcard = boundHost === "0.0.0.0" || boundHost === "::";
  const allowed = new Set([...LOOPBACK, boundHost, ...extra].map(hostnameOf));
  return (req, res, next) => {
    const lines = hostLines(req);
    const parsed = lines.length === 1 ? parseHost(lines[0]!.trim()) : null;
    if (!parsed) {
      const message = lines.length === 0 ? "the request has no Host header" : lines.length > 1 ? "the request has more than one Host header" : "the Host header is malformed: expected a host name, an IPv4 address or a bracketed IPv6 address, optionally with ':port'";
      sendError(res, new ServiceError("invalid_request", message, { code: "invalid_host_header" }));
      return;
    }
    const host = parsed.hostname;
    // Bound to every interface, any IP literal is a direct connection, not a rebinding.
    if (allowed.has(host) || (wildcard && isIP(host) !== 0) || host.endsWith(".localhost")) {
      next();
      return;
    }
    sendError(res, new ServiceError("permission", `Host '${host}' is not allowed; add it with --allowed-host if you proxy to this server`, { code: "host_not_allowed" }));
  };
}
