/** The workbench's session cookie: HttpOnly, SameSite=Strict, scoped to the API, Secure under TLS. */
import { parse, serialize } from "cookie";
import type { Request, Response } from "express";

export const SESSION_COOKIE = "pustaka_session";

/** The session secret the browser sent, if any. */
export function readSessionCookie(req: Request): string | undefined {
  const header = req.get("cookie");
  if (!header) return undefined;
  return parse(header)[SESSION_COOKIE] || undefined;
}

/** Sets the session cookie; `Secure` when the request came over TLS (`req.secure`), so it never travels in clear. */
export function setSessionCookie(res: Response, secret: string, maxAgeSeconds: number): void {
  res.append("Set-Cookie", serialize(SESSION_COOKIE, secret, { httpOnly: true, sameSite: "strict", path: "/v1", maxAge: maxAgeSeconds, secure: res.req.secure }));
}

export function clearSessionCookie(res: Response): void {
  res.append("Set-Cookie", serialize(SESSION_COOKIE, "", { httpOnly: true, sameSite: "strict", path: "/v1", maxAge: 0, secure: res.req.secure }));
}
