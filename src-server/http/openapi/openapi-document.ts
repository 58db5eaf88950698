/**
 * `GET /v1/openapi.json`: an OpenAPI 3.1 document generated from the running app — every
 * route it serves (walked from Express's router), the scope each requires (read from its
 * `requireScope` handler), and request bodies and query parameters converted from the
 * zod schemas the handlers validate with (`z.toJSONSchema`, JSON Schema 2020-12, which
 * OpenAPI 3.1 uses as is). Nothing in it is written by hand but summaries. Only the API's
 * routes are in it (`api-paths.ts`): whatever else the app mounts (the workbench) is not.
 */
import type { Express } from "express";
import { z } from "zod";
import { isApiPath } from "../api-paths.js";
import { docOf, scopeOf, type RouteDoc } from "./route-doc.js";

/** The error body every route answers failures with (OpenAI's shape). */
export const ErrorBodySchema = z.object({
  error: z.object({
    message: z.string(),
    type: z.string().describe("invalid_request_error, authentication_error, permission_error, not_found_error, conflict_error, rate_limit_error, server_error, service_unavailable_error"),
    param: z.string().nullable().describe("The request field at fault, dotted (messages.0.content)"),
    code: z.string().nullable().describe("Stable snake_case code (model_not_found, context_length_exceeded, …)"),
  }),
});

export interface ServedRoute {
  method: string;
  /** Express path (`/v1/rag/corpora/:corpusId`, `/v1/models/{*id}`). */
  path: string;
  handlers: unknown[];
}

/** A route's path as Express keeps it: a string, a RegExp, or an array of them. */
type RoutePath = string | RegExp | (string | RegExp)[];

interface Layer {
  route?: { path: RoutePath; methods: Record<string, boolean>; stack: { handle: unknown }[] };
  handle?: { stack?: Layer[] };
}

/**
 * Every API route the app serves (a string path under the API's prefixes), with its
 * handlers, in registration order. Routes outside the API (the workbench's) are left out,
 * and so are RegExp paths, which no OpenAPI path can express.
 */
export function servedRoutes(app: Express): ServedRoute[] {
  const out: ServedRoute[] = [];
  const walk = (stack: Layer[]) => {
    for (const layer of stack) {
      if (layer.route) {
        const paths = [layer.route.path].flat().filter((p): p is string => typeof p === "string" && isApiPath(p));
        for (const method of Object.keys(layer.route.methods).filter((m) => layer.route!.methods[m] && m !== "_all")) {
          for (const path of paths) out.push({ method, path, handlers: layer.route.stack.map((s) => s.handle) });
        }
      } else if (layer.handle?.stack) walk(layer.handle.stack);
    }
  };
  walk((app as unknown as { router: { stack: Layer[] } }).router.stack);
  return out;
}

/** `:corpusId` → `{corpusId}`, `{*id}` → `{id}`; the parameter names in order. */
export function openApiPath(path: string): { path: string; params: string[] } {
  const params: string[] = [];
  const converted = path.replace(/:([A-Za-z_][A-Za-z0-9_]*)|\{\*([A-Za-z_][A-Za-z0-9_]*)\}/g, (_m, plain: string | undefined, wild: string | undefined) => {
    const name = plain ?? wild!;
    params.push(name);
    return `{${name}}`;
  });
  return { path: converted, params };
}

const jsonSchema = (schema: z.ZodType): Record<string, unknown> => {
  const { $schema: _drop, ...rest } = z.toJSONSchema(schema, { target: "draft-2020-12", io: "input", unrepresentable: "any" }) as Record<string, unknown>;
  return rest;
};

function queryParameters(query: z.ZodType): Record<string, unknown>[] {
  const shape = (query as unknown as { shape?: Record<string, z.ZodType> }).shape;
  if (!shape) return [];
  return Object.entries(shape).map(([name, schema]) => {
    const optional = (schema as unknown as { safeParse: (v: unknown) => { success: boolean } }).safeParse(undefined).success;
    return { name, in: "query", required: !optional, schema: jsonSchema(schema) };
  });
}

function operation(route: ServedRoute, routeDoc: RouteDoc | undefined, scope: string | undefined, params: string[]): Record<string, unknown> {
  const op: Record<string, unknown> = {
    operationId: `${route.method}${openApiPath(route.path).path.replace(/[^A-Za-z0-9]+(.)?/g, (_m, c: string | undefined) => (c ? c.toUpperCase() : ""))}`,
    summary: routeDoc?.summary ?? `${route.method.toUpperCase()} ${route.path}`,
    tags: [routeDoc?.tag ?? "Other"],
  };
  if (scope) {
    op.description = `Needs the \`${scope}\` scope.`;
    // The same, for readers that are programs (the /docs page).
    op["x-pustaka-scope"] = scope;
  }
  const parameters: Record<string, unknown>[] = params.map((name) => ({ name, in: "path", required: true, schema: { type: "string" } }));
  if (routeDoc?.query) parameters.push(...queryParameters(routeDoc.query));
  if (parameters.length) op.parameters = parameters;
  if (routeDoc?.body) op.requestBody = { required: true, content: { "application/json": { schema: jsonSchema(routeDoc.body) } } };
  for (const [fields, type] of [[routeDoc?.multipart, "multipart/form-data"], [routeDoc?.form, "application/x-www-form-urlencoded"]] as const) {
    if (!fields) continue;
    const properties = Object.fromEntries(Object.entries(fields).map(([name, description]) => [name, { type: "string", description }]));
    op.requestBody = { required: true, content: { [type]: { schema: { type: "object", properties } } } };
  }
  const status = String(routeDoc?.response?.status ?? 200);
  const contentType = routeDoc?.response?.contentType ?? "application/json";
  const content: Record<string, unknown> = { [contentType]: {} };
  if (routeDoc?.streams) content["text/event-stream"] = {};
  op.responses = {
    [status]: { description: routeDoc?.response?.description ?? "OK", content },
    default: { description: "An error in OpenAI's shape", content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } } },
  };
  if (routeDoc?.public) op.security = [];
  return op;
}

/** The OpenAPI 3.1 document of `app` as it is served. */
export function openApiDocument(app: Express, info: { version: string; serverUrl?: string }): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of servedRoutes(app)) {
    const { path, params } = openApiPath(route.path);
    const routeDoc = route.handlers.map(docOf).find(Boolean);
    const scope = route.handlers.map(scopeOf).find(Boolean);
    // A path served by several layers (a body parser, then the handler): the documented one wins.
    if (!routeDoc && paths[path]?.[route.method]) continue;
    (paths[path] ??= {})[route.method] = operation(route, routeDoc, scope, params);
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "Pustaka",
      version: info.version,
      description: "Local inference (OpenAI-compatible) and grounded answers with citations over your own documents.",
    },
    ...(info.serverUrl ? { servers: [{ url: info.serverUrl }] } : {}),
    security: [{ bearer: [] }, { session: [] }],
    components: {
      securitySchemes: {
        bearer: { type: "http", scheme: "bearer", description: "An API key (psk-…) or a service account's OAuth 2.0 access token" },
        session: { type: "apiKey", in: "cookie", name: "pustaka_session", description: "The workbench's session (browser mode)" },
      },
      schemas: { Error: jsonSchema(ErrorBodySchema) },
    },
    paths,
  };
}
