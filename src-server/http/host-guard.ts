/**
 * DNS-rebinding guard: a browser page on another origin can reach 127.0.0.1 only
 * through a hostname it controls, so requests whose `Host` is not ours are refused.
 */
import { isIP } from "node:net";
import type { RequestHandler } from "express";
import { ServiceError } from "../errors.js";
import { sendError } from "./error-handler.js";

const LOOPBACK = ["localhost", "127.0.0.1", "::1", "[::1]"];

/** Host name without port; brackets kept off IPv6 literals. */
export function hostnameOf(hostHeader: string): string {
  const host = hostHeader.trim().toLowerCase();
  if (host.startsWith("[")) return host.slice(1, host.indexOf("]"));
  const colon = host.lastIndexOf(":");
  return colon > 0 && host.indexOf(":") === colon ? host.slice(0, colon) : host;
}

export function hostGuard(boundHost: string, extra: readonly string[]): RequestHandler {
  const wildcard = boundHost === "0.0.0.0" || boundHost === "::";
  const allowed = new Set([...LOOPBACK, boundHost.toLowerCase(), ...extra.map((h) => h.toLowerCase())].map(hostnameOf));
  return (req, res, next) => {
    const host = hostnameOf(req.get("host") ?? "");
    // Bound to every interface, any IP literal is a direct connection, not a rebinding.
    if (allowed.has(host) || (wildcard && isIP(host) !== 0) || host.endsWith(".localhost")) {
      next();
      return;
    }
    sendError(res, new ServiceError("permission", `Host '${host}' is not allowed; add it with --allowed-host if you proxy to this server`, { code: "host_not_allowed" }));
  };
}
