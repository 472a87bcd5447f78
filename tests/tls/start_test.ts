/**
 * TLS files are checked when a process starts: a certificate that is not its key's, expired or not yet valid, or a
 * lone --tls-cert or --tls-key stops main.ts with one line and status 2. Without TLS, a role bound to an address
 * other machines reach warns once that what it is sent travels in clear.
 */
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { ConfigError, readTls } from "../../core/config/mod.ts";
import { haveOpenssl, makeTestCerts } from "../helpers/certs.ts";
import { Procs } from "../../testing/procs.ts";
import { waitFor } from "../../testing/wait.ts";

const openssl = await haveOpenssl();
if (!openssl) console.log("tls start_test: skipped: no openssl command (apt-get install openssl)");

const MAIN = fileURLToPath(new URL("../../main.ts", import.meta.url));
const CONFIG = fileURLToPath(new URL("../../deno.json", import.meta.url));

/** Runs main.ts with `flags` to its end; its status and the lines it wrote to stderr. */
async function runMain(flags: string[]): Promise<{ code: number; lines: string[] }> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--config", CONFIG, MAIN, ...flags],
    env: { SEAMLESS_KV: ":memory:" },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const lines = new TextDecoder().decode(out.stderr).split("\n").filter((l) => l.trim() !== "");
  return { code: out.code, lines };
}

Deno.test({
  name: "a bad TLS certificate or key stops main.ts with one line and status 2",
  ignore: !openssl,
  async fn() {
    await using c = await makeTestCerts();
    const role = ["--role=mgr", "--port=0", "--admin-port=0"];
    const cases: [string[], RegExp][] = [
      [
        [`--tls-cert=${c.cert}`, `--tls-key=${c.otherKey}`],
        /^error: --tls-key: .*stray\.key is not the key of the certificate in .*server\.pem/,
      ],
      [
        [`--tls-cert=${c.expiredCert}`, `--tls-key=${c.expiredKey}`],
        /^error: --tls-cert: the certificate in .*expired\.pem expired on \d{4}-/,
      ],
      [
        [`--tls-cert=${c.futureCert}`, `--tls-key=${c.futureKey}`],
        /^error: --tls-cert: the certificate in .*future\.pem is not valid before \d{4}-/,
      ],
      [[`--tls-cert=${c.cert}`], /^error: --tls-cert: given without --tls-key/],
      [[`--tls-key=${c.key}`], /^error: --tls-key: given without --tls-cert/],
      [[`--tls-ca=${c.ca}`], /^error: --tls-ca: .*set --tls-cert and --tls-key/],
      [[`--tls-cert=${c.dir}/missing.pem`, `--tls-key=${c.key}`], /^error: --tls-cert: cannot read .*missing\.pem/],
      [[`--tls-cert=${c.key}`, `--tls-key=${c.key}`], /^error: --tls-cert: .*server\.key holds no PEM certificate/],
      [
        ["--client-url=http://play.example.com/"],
        /^error: --client-url: "http:\/\/play\.example\.com\/" is not a WebSocket URL/,
      ],
    ]; // deno-fmt-ignore
    const runs = await Promise.all(cases.map(([flags]) => runMain([...role, ...flags])));
    runs.forEach((r, i) => {
      assert.equal(r.code, 2, `${cases[i][0].join(" ")}: status; stderr ${r.lines.join(" | ")}`);
      assert.equal(r.lines.length, 1, `${cases[i][0].join(" ")}: one line; got ${r.lines.join(" | ")}`);
      assert.match(r.lines[0], cases[i][1]);
    });
  },
});

Deno.test({
  name: "readTls: the same checks without a process, and the material of a good pair",
  ignore: !openssl,
  async fn() {
    await using c = await makeTestCerts();
    const ok = readTls({ tlsCert: c.cert, tlsKey: c.key, tlsCa: c.ca });
    assert.ok(ok?.cert.includes("BEGIN CERTIFICATE") && ok.key.includes("PRIVATE KEY") && ok.ca?.includes("BEGIN"));
    assert.equal(readTls({ tlsCert: null, tlsKey: null, tlsCa: null }), null);
    // The dates are checked against the time given: the good certificate expires within 20 days.
    assert.throws(
      () => readTls({ tlsCert: c.cert, tlsKey: c.key, tlsCa: null }, undefined, new Date(Date.now() + 30 * 86_400_000)),
      (e) => e instanceof ConfigError && /expired on/.test(e.message),
    );
    assert.throws(
      () => readTls({ tlsCert: c.cert, tlsKey: c.key, tlsCa: c.expiredCert }, undefined),
      (e) => e instanceof ConfigError && /^--tls-ca:.*expired on/.test(e.message),
    );
  },
});

Deno.test({
  name:
    "without TLS, a cellappmgr or baseapp bound beyond loopback warns once that the token or passwords travel in clear",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    await using procs = new Procs();
    const flags = ["--role=mgr", "--host=0.0.0.0", "--port=0", "--admin-port=0", "--secret=s", "--admin-token=t"];
    const open = await procs.start(flags);
    await waitFor("the running line", () => open.stderr.some((l) => /running game/.test(l)));
    const warned = open.stderr.filter((l) => /the admin token travels in clear/.test(l));
    assert.equal(warned.length, 1, open.stderr.join("\n"));
    // A baseapp warns for its clients' passwords (it starts while its cellappmgr is still unreachable).
    const base = await procs.start([
      "--role=base",
      "--host=0.0.0.0",
      "--port=0",
      "--client-port=0",
      "--secret=s",
      `--mgr=${open.ready.address!.replace(/^.*:/, "127.0.0.1:")}`,
      "--client-url=wss://play.example.com/b1/",
    ]);
    assert.equal(base.ready.clientUrl, "wss://play.example.com/b1/", "a proxy's URL is announced as given");
    await waitFor("the running line", () => base.stderr.some((l) => /running game/.test(l)));
    assert.equal(base.stderr.filter((l) => /clients' passwords travel in clear over ws:\/\//.test(l)).length, 1);
    const local = await procs.start(["--role=mgr", "--port=0", "--admin-port=0"]);
    await waitFor("the running line", () => local.stderr.some((l) => /running game/.test(l)));
    assert.ok(!local.stderr.some((l) => /in clear/.test(l)), "no warning on loopback");
  },
});
