/**
 * Both sides of a process connection prove the cluster secret: a dialler refuses (and logs) a listener whose
 * welcome carries no proof, a wrong one, or a hello's proof played back, and decodes nothing it sends after. With a
 * CA the ports run over TLS: a peer whose certificate the CA did not sign is refused on both sides and logged.
 */
import assert from "node:assert/strict";
import { dial, WireServer, type WireTls } from "../../core/wire/mod.ts";
import { makeProof } from "../../core/wire/mod.ts";
import { fakeListener, type Welcome } from "../helpers/fake_port.ts";
import { memoryLogger } from "../../testing/log.ts";
import { within } from "../../testing/wait.ts";
import { haveOpenssl, makeTestCerts, type TestCerts } from "../helpers/certs.ts";

const openssl = await haveOpenssl();
if (!openssl) console.log("tls handshake_test: TLS cases skipped: no openssl command (apt-get install openssl)");

Deno.test("a dialler refuses a listener that does not prove the cluster secret, decoding nothing after", async () => {
  const cases: [string, Welcome, RegExp][] = [
    ["no proof", () => Promise.resolve(null), /did not prove the cluster secret/],
    [
      "a proof with another secret",
      (h) => makeProof("guess", h.nonce, "welcome", "cellappmgr", 1, "127.0.0.1:1"),
      /does not know the cluster secret/,
    ],
    [
      // The dialler's own hello proof, played back with its identity: made for a hello, it is no welcome's proof.
      "the hello's proof played back",
      (h) => Promise.resolve(h.proof),
      /does not know the cluster secret/,
    ],
  ];
  for (const [i, [what, welcome, reason]] of cases.entries()) {
    const fake = fakeListener(welcome);
    const log = memoryLogger();
    try {
      await assert.rejects(
        dial(fake.address, { role: "cellapp", secret: "s3cret", address: "127.0.0.1:2", log }),
        reason,
        what,
      );
      const hello = await fake.hello;
      assert.equal(hello.nonce.length, 16, `${what}: the hello carries the dialler's nonce`);
      // The same refusal of the same host is logged once a minute (core/wire/channel.ts): the played-back proof's
      // line was the one before it.
      if (i < 2) await log.waitFor(new RegExp(`refusing peer: .*${reason.source}`));
      assert.ok(!log.lines.some((l) => /999|unknown message/.test(l)), `${what}: nothing decoded after the welcome`);
    } finally {
      fake.close();
    }
  }
});

Deno.test("a listener with the secret proves it: the dialler opens, and the other way round refuses", async () => {
  const ok = fakeListener((h) => makeProof("s3cret", h.nonce, "welcome", "cellappmgr", 1, "127.0.0.1:1"));
  const log = memoryLogger();
  try {
    const ch = await dial(ok.address, { role: "cellapp", secret: "s3cret", address: "127.0.0.1:2", log });
    assert.equal(ch.peer.role, "cellappmgr");
    // The fake's stray frame is decoded now, from a peer that proved the secret: dropped for it.
    assert.match(await ch.closed, /unknown message kind 999/);
  } finally {
    ok.close();
  }
  // A real listener without the secret never gets as far: the dialler's hello is refused.
  const serverLog = memoryLogger();
  const open = new WireServer({ host: "127.0.0.1", port: 0, role: "cellappmgr", secret: null, log: serverLog });
  try {
    await assert.rejects(dial(open.address, { role: "cellapp", secret: "s3cret" }), /has no secret/);
  } finally {
    open.close();
  }
});

function tlsOf(c: TestCerts, ca = c.ca, cert = c.cert, key = c.key): WireTls {
  return { cert: Deno.readTextFileSync(cert), key: Deno.readTextFileSync(key), ca: Deno.readTextFileSync(ca) };
}

Deno.test({
  name: "process ports over TLS: a peer of the same CA opens, one of another CA is refused on both sides and logged",
  ignore: !openssl,
  async fn() {
    await using c = await makeTestCerts();
    const log = memoryLogger();
    const server = new WireServer({
      host: "127.0.0.1",
      port: 0,
      role: "cellappmgr",
      secret: "s3cret",
      tls: tlsOf(c),
      handshakeTimeoutMs: 500,
      log,
    });
    try {
      const ch = await dial(server.address, { role: "cellapp", secret: "s3cret", tls: tlsOf(c) });
      assert.equal(ch.peer.role, "cellappmgr");
      ch.close("done");
      await ch.closed;

      // A process of another CA does not trust this listener's certificate, and says why.
      const stranger = tlsOf(c, c.otherCa, c.otherCert, c.otherCertKey);
      await assert.rejects(
        dial(server.address, { role: "cellapp", secret: "s3cret", tls: stranger }),
        /TLS handshake with 127\.0\.0\.1:\d+ failed: .*(UnknownIssuer|certificate)/i,
      );
      await log.waitFor(/refusing peer 127\.0\.0\.1:\d+: TLS handshake failed: .*(UnknownCA|alert)/i);
      assert.equal(server.channels.size, 0, "no channel for the stranger");

      // A connection that never starts its TLS handshake is closed at the deadline, its socket with it.
      const silent = await Deno.connect({ hostname: "127.0.0.1", port: server.port });
      const buf = new Uint8Array(64);
      assert.equal(
        await within("the listener closing a silent connection", silent.read(buf).catch(() => null), 3000),
        null,
      );
      silent.close();
      await log.waitFor(/refusing peer 127\.0\.0\.1:\d+: TLS handshake failed: no TLS handshake within 500 ms/);

      // A plain dialler gets nothing it can read as a challenge; a TLS dialler to a plain port fails its handshake.
      await assert.rejects(dial(server.address, { role: "cellapp", secret: "s3cret", handshakeTimeoutMs: 1000 }));
      const plain = new WireServer({ host: "127.0.0.1", port: 0, role: "cellappmgr", secret: "s3cret" });
      try {
        await assert.rejects(
          dial(plain.address, { role: "cellapp", secret: "s3cret", tls: tlsOf(c) }),
          /TLS handshake with .* failed/,
        );
      } finally {
        plain.close();
      }
    } finally {
      server.close();
    }
  },
});
