/**
 * Remote models over TLS with client certificates (mutual TLS), as an office's GPU server
 * behind a TLS-terminating proxy would require: a private CA made with openssl, a server
 * certificate, and a client certificate Pustaka must present. The upstream is llama.cpp's
 * llama-server behind Node's own HTTPS server (requestCert, rejectUnauthorized), which
 * forwards each request to it. Configured from files (the configuration) and from PEM text
 * (the admin API, sealed at rest).
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import http from "node:http";
import https from "node:https";
import type { AddressInfo } from "node:net";
import type { TLSSocket } from "node:tls";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { startLlamaServer, type LlamaServer } from "../helpers/llama-server.js";
import { testModel } from "../helpers/models.js";
import { startTestServer, type TestServer } from "../helpers/test-server.js";

const openssl = (args: string[]) => execFileSync("openssl", args, { stdio: "ignore" });

/** A CA, a server certificate for 127.0.0.1 and a client certificate, all signed by the CA. */
function pki(dir: string) {
  const file = (name: string) => path.join(dir, name);
  const ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];
  openssl(["req", "-x509", ...ec, "-days", "1", "-subj", "/CN=Pustaka test CA", "-keyout", file("ca.key"), "-out", file("ca.pem")]);
  for (const [name, subject, ext] of [
    ["server", "/CN=127.0.0.1", "subjectAltName=IP:127.0.0.1"],
    ["client", "/CN=pustaka-front", "extendedKeyUsage=clientAuth"],
  ] as const) {
    openssl(["req", ...ec, "-subj", subject, "-keyout", file(`${name}.key`), "-out", file(`${name}.csr`)]);
    const extFile = file(`${name}.ext`);
    execFileSync("sh", ["-c", `printf '%s\\n' '${ext}' > '${extFile}'`]);
    openssl(["x509", "-req", "-in", file(`${name}.csr`), "-CA", file("ca.pem"), "-CAkey", file("ca.key"), "-CAcreateserial", "-days", "1", "-extfile", extFile, "-out", file(`${name}.pem`)]);
  }
  return { ca: file("ca.pem"), serverCert: file("server.pem"), serverKey: file("server.key"), clientCert: file("client.pem"), clientKey: file("client.key") };
}

/** An HTTPS front that demands a client certificate from the CA and forwards to `target`. */
async function mtlsProxy(target: string, files: ReturnType<typeof pki>): Promise<{ url: string; clients: string[]; close(): Promise<void> }> {
  const clients: string[] = [];
  const server = https.createServer({ cert: readFileSync(files.serverCert), key: readFileSync(files.serverKey), ca: readFileSync(files.ca), requestCert: true, rejectUnauthorized: true }, (req, res) => {
    const cn = (req.socket as TLSSocket).getPeerCertificate().subject?.CN;
    clients.push(Array.isArray(cn) ? cn.join(",") : (cn ?? ""));
    const upstream = http.request(new URL(req.url ?? "/", target), { method: req.method, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on("error", () => res.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `https://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    clients,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

describe("remote models over mutual TLS", () => {
  let dir: string;
  let files: ReturnType<typeof pki>;
  let upstream: LlamaServer;
  let proxy: Awaited<ReturnType<typeof mtlsProxy>>;
  let t: TestServer;
  const chat = (model: string) => t.call("POST", "/v1/chat/completions", { model, messages: [{ role: "user", content: "Hello" }], max_tokens: 4 });

  before(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), "pustaka-mtls-"));
    files = pki(dir);
    upstream = await startLlamaServer({ model: testModel("smollm2-135m-instruct"), alias: "smol", parallel: 2 });
    proxy = await mtlsProxy(upstream.url.replace(/\/v1$/, ""), files);
    t = await startTestServer({
      bindings: {},
      rendererDir: null,
      config: {
        models: {
          remote: {
            "with-cert": { upstreams: [{ url: proxy.url, model: "smol", tls: { caFile: files.ca, certFile: files.clientCert, keyFile: files.clientKey } }] },
            "no-cert": { upstreams: [{ url: proxy.url, model: "smol", tls: { caFile: files.ca } }] },
            "no-ca": { upstreams: [{ url: proxy.url, model: "smol" }] },
          },
        },
        upstreams: { healthIntervalSeconds: 0 },
      },
    });
  });
  after(async () => {
    await t?.close();
    await proxy?.close();
    await upstream?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("presents the client certificate from the configured files, and trusts the private CA", async () => {
    const res = await chat("with-cert");
    assert.equal(res.status, 200, JSON.stringify(res.json));
    assert.ok(proxy.clients.includes("pustaka-front"), "the upstream saw Pustaka's client certificate");
  });

  it("says clearly when the upstream refuses a missing certificate, or its own certificate is not trusted", async () => {
    const noCert = await chat("no-cert");
    assert.ok([502, 503].includes(noCert.status), JSON.stringify(noCert.json));
    assert.match(noCert.json.error.code, /^upstream_/);
    const noCa = await chat("no-ca");
    assert.ok([502, 503].includes(noCa.status), JSON.stringify(noCa.json));
    assert.match(noCa.json.error.message, /certificate|CERT|reached|closed/i);
  });

  it("takes the certificate and key as PEM through the admin API, sealed and never returned", async () => {
    const pem = (file: string) => readFileSync(file, "utf8");
    const body = { id: "mtls-added", upstreams: [{ url: `${proxy.url}#smol`, tls: { ca_pem: pem(files.ca), cert_pem: pem(files.clientCert), key_pem: pem(files.clientKey) } }] };
    const tested = await t.call("POST", "/v1/admin/remote-models/test", body);
    assert.equal(tested.json.ok, true, JSON.stringify(tested.json));
    const created = await t.call("POST", "/v1/admin/remote-models", body);
    assert.equal(created.status, 201, JSON.stringify(created.json));
    assert.equal(created.json.upstreams[0].client_certificate, true);
    const keyBody = pem(files.clientKey).split("\n").filter((l) => l && !l.startsWith("-----"))[0]!;
    assert.ok(!JSON.stringify(created.json).includes(keyBody));
    assert.equal((await chat("mtls-added")).status, 200);
    for (const file of readdirSync(t.dataDir).filter((f) => f.startsWith("pustaka.db"))) {
      assert.ok(!readFileSync(path.join(t.dataDir, file)).includes(Buffer.from(keyBody)), `the client key is not in ${file} in clear`);
    }
  });
});
