/**
 * A cluster of real main.ts processes with --tls-cert, --tls-key and --tls-ca: an SDK client logs in over wss://
 * (in its own Deno trusting the test CA), the admin API answers over HTTPS with the token and its watch socket over
 * wss://, and the process ports run over TLS. A process of another CA, one with another secret, and a stranger's
 * port that does not prove the secret are each refused and logged.
 */
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import type { ClusterView } from "../../core/views.ts";
import { makeProof } from "../../core/wire/mod.ts";
import { haveOpenssl, makeTestCerts } from "../helpers/certs.ts";
import { fakeListener } from "../helpers/fake_port.ts";
import { api, type Proc, Procs } from "../../testing/procs.ts";
import { waitFor } from "../../testing/wait.ts";

const openssl = await haveOpenssl();
if (!openssl) console.log("tls cluster_test: skipped: no openssl command (apt-get install openssl)");

const SECRET = "tls-s3cret";
const TOKEN = "tls-t0ken";
const WSS_CLIENT = fileURLToPath(new URL("./wss_client.ts", import.meta.url));
const CONFIG = fileURLToPath(new URL("../../deno.json", import.meta.url));

/** Waits until a line of `p`'s log matches `re`. */
function logged(p: Proc, re: RegExp, ms = 15_000): Promise<string> {
  return waitFor(`${re} in the log of pid ${p.pid}`, () => p.stderr.find((l) => re.test(l)), ms)
    .catch((e) => {
      throw new Error(`${(e as Error).message}\n${p.stderr.join("\n")}`);
    });
}

Deno.test({
  name: "a TLS cluster: SDK over wss, admin over https with its watch socket, strangers refused and logged",
  ignore: !openssl,
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    await using certs = await makeTestCerts();
    await using procs = new Procs();
    const ca = Deno.readTextFileSync(certs.ca);
    // Deno's fetch takes a `client` its RequestInit type does not declare: hence the casts below.
    using client = Deno.createHttpClient({ caCerts: [ca] });
    const tls = [`--tls-cert=${certs.cert}`, `--tls-key=${certs.key}`, `--tls-ca=${certs.ca}`];
    const env = { SEAMLESS_SECRET: SECRET, SEAMLESS_ADMIN_TOKEN: TOKEN };
    const mgr = await procs.start(["--role=mgr", "--port=0", "--admin-port=0", "--npcs=5", ...tls], { env });
    const admin = mgr.ready.admin!;
    assert.match(admin, /^https:\/\/127\.0\.0\.1:\d+$/);
    const auth = { authorization: `Bearer ${TOKEN}` };
    const get = (path: string, headers: Record<string, string> = auth) =>
      api(admin, path, { headers, client } as RequestInit);

    const mgrFlags = [`--mgr=${mgr.ready.address}`, "--port=0", ...tls];
    await procs.start(["--role=cell", ...mgrFlags], { env });
    const base = await procs.start(["--role=base", "--client-port=0", "--client-spawn", ...mgrFlags], { env });
    const clientUrl = base.ready.clientUrl as string;
    assert.match(clientUrl, /^wss:\/\/127\.0\.0\.1:\d+\/$/);
    await waitFor("the cellapp and the baseapp registered over TLS, the baseapp announcing wss", async () => {
      const c = (await get("/api/cluster")).body as ClusterView;
      return c.processes.some((p) => p.role === "cellapp") &&
        c.processes.some((p) => p.role === "baseapp" && p.clientUrl === clientUrl);
    }, 30_000);

    // The admin API is HTTPS only, and still wants its token.
    assert.equal((await get("/api/cluster", {})).status, 401);
    await assert.rejects(fetch(`${admin}/api/health`), "the test CA is not trusted without caCerts");
    await assert.rejects(
      (async () => await (await fetch(admin.replace("https:", "http:") + "/api/health")).text())(),
      "plain HTTP is not answered",
    );

    // The SDK over wss:// and the watch socket over wss://, in a Deno that trusts the test CA.
    const ticket = await api(admin, "/api/watch/ticket", {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      client,
    } as RequestInit);
    assert.equal(ticket.status, 201);
    const watchUrl = `${admin.replace("https:", "wss:")}/api/watch?ticket=${
      (ticket.body as { ticket: string }).ticket
    }`;
    const run = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", "--config", CONFIG, WSS_CLIENT, clientUrl, watchUrl],
      env: { DENO_CERT: certs.ca },
      stdout: "piped",
      stderr: "piped",
    }).output();
    const dec = new TextDecoder();
    assert.equal(run.code, 0, dec.decode(run.stderr));
    const seen = JSON.parse(dec.decode(run.stdout).trim().split("\n").pop()!);
    assert.ok(seen.player > 0 && seen.space > 0, JSON.stringify(seen));
    assert.equal(seen.watch, "hello");

    // A cellapp of another CA: it does not trust the cellappmgr, the cellappmgr's handshake fails, both log it.
    const stranger = await procs.start([
      "--role=cell",
      `--mgr=${mgr.ready.address}`,
      "--port=0",
      `--tls-cert=${certs.otherCert}`,
      `--tls-key=${certs.otherCertKey}`,
      `--tls-ca=${certs.otherCa}`,
    ], { env });
    await logged(stranger, /cannot reach the cellappmgr at .*TLS handshake with .* failed: .*UnknownIssuer/);
    await logged(mgr, /refusing peer 127\.0\.0\.1:\d+: TLS handshake failed: .*UnknownCA/);

    // A cellapp of the right CA with another secret: the cellappmgr refuses its hello.
    const guesser = await procs.start(["--role=cell", ...mgrFlags], { env: { ...env, SEAMLESS_SECRET: "guess" } });
    await logged(mgr, /refusing peer: wrong cluster secret/);
    await logged(guesser, /refused by peer: wrong cluster secret/);
    const c = (await get("/api/cluster")).body as ClusterView;
    assert.equal(c.processes.filter((p) => p.role === "cellapp").length, 1, "only the first cellapp joined");

    // A stranger's port that does not prove the secret: a cellapp dialling it refuses it and says why.
    const fake = fakeListener((h) => makeProof("guess", h.nonce, "welcome", "cellappmgr", 1, "127.0.0.1:1"));
    try {
      const fooled = await procs.start(["--role=cell", `--mgr=${fake.address}`, "--port=0"], { env });
      await logged(fooled, /refusing peer: the cellappmgr at .* does not know the cluster secret/);
      assert.ok(!fooled.stderr.some((l) => /999/.test(l)), "nothing after the welcome was decoded");
    } finally {
      fake.close();
    }
  },
});
