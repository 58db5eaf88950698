/** Remote models through the admin API: requests in, views out (never a secret). */
import { z } from "zod";
import type { ReplicaProbe, RemoteModelInput, RemoteModelView } from "../../admin/remote-model-service.js";
import type * as Api from "../../contract/index.js";
import { MODEL_TYPES } from "../../models/catalog.js";

const pem = z.string().min(1).max(64 * 1024);

export const CreateRemoteModelSchema = z
  .object({
    id: z.string().regex(/^[a-z0-9][a-z0-9._:-]{0,127}$/, "ids are lowercase letters, digits and . _ : -"),
    type: z.enum(MODEL_TYPES).optional(),
    upstreams: z
      .array(
        z
          .object({
            url: z.string().min(1).max(2048),
            model: z.string().min(1).max(256).optional(),
            name: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/).optional(),
            api_key: z.string().min(1).max(4096).optional(),
            tls: z.object({ ca_pem: pem.optional(), cert_pem: pem.optional(), key_pem: pem.optional() }).strict().optional(),
          })
          .strict(),
      )
      .min(1)
      .max(64),
    context_length: z.number().int().positive().max(10_000_000).optional(),
    dimensions: z.number().int().positive().max(65_536).optional(),
  })
  .strict();

export function remoteModelInput(body: z.infer<typeof CreateRemoteModelSchema>): RemoteModelInput {
  return {
    id: body.id,
    type: body.type,
    contextLength: body.context_length,
    dimensions: body.dimensions,
    upstreams: body.upstreams.map((u) => ({ url: u.url, model: u.model, name: u.name, apiKey: u.api_key, tls: u.tls && { ca: u.tls.ca_pem, cert: u.tls.cert_pem, key: u.tls.key_pem } })),
  };
}

export const remoteModelObject = (m: RemoteModelView): Api.RemoteModel => ({
  id: m.id,
  object: "remote_model",
  type: m.type,
  source: m.source,
  context_length: m.contextLength,
  dimensions: m.dimensions,
  created_at: m.createdAt,
  upstreams: m.upstreams.map((u) => ({
    id: u.id,
    url: u.url,
    model: u.model,
    api_key: u.apiKey,
    client_certificate: u.clientCertificate,
    health: u.state,
    in_flight: u.inFlight,
    queued: u.queued,
    requests: u.requests,
    failures: u.failures,
    last_error: u.lastError,
  })),
});

export const remoteModelTestObject = (probes: ReplicaProbe[]): Api.RemoteModelTest => ({
  object: "remote_model.test",
  ok: probes.every((p) => p.ok),
  upstreams: probes.map((p) => ({ id: p.id, url: p.url, ok: p.ok, ms: p.ms, models: p.models, serves_model: p.servesModel, error: p.error })),
});
