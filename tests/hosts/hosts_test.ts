/**
 * The test-host helper itself (testing/hosts.ts): hosts reach each other over the bridge and the test reaches
 * them through a forward; a cut link and a blackhole route stop what they should; nothing is left behind after a
 * thrown error, a SIGTERM, or (after the next sweep) a SIGKILL.
 */
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { type Host, Hosts, hostsUnavailable, namespaces, rootLinks, underSweepLock } from "../../testing/hosts.ts";
import { splitLines } from "../../cli/local_cluster.ts";
import { waitFor, within } from "../../testing/wait.ts";
import { isAlive } from "../../testing/procs.ts";

const why = await hostsUnavailable();
if (why) console.log(`tests/hosts skipped: ${why}`);
const opts = { ignore: why !== null, sanitizeOps: false, sanitizeResources: false };

const PROBE = fileURLToPath(new URL("./probe.ts", import.meta.url));
const HOSTS = new URL("../../testing/hosts.ts", import.meta.url).href;

/** A probe (probe.ts) inside `host`, with its JSON lines. */
function probe(hosts: Hosts, host: Host, args: string[]): { child: Deno.ChildProcess; next: () => Promise<unknown> } {
  const child = hosts.spawn(host, [Deno.execPath(), "run", "-A", "--unstable-net", PROBE, ...args], {
    stdin: "piped",
    stdout: "piped",
  });
  const lines = child.stdout.pipeThrough(new TextDecoderStream()).pipeThrough(splitLines()).getReader();
  return {
    child,
    next: async () => {
      const r = await within(`a line from the probe ${args.join(" ")} in ${host.name}`, lines.read(), 15_000);
      if (r.done) throw new Error(`probe ${args.join(" ")} in ${host.name} exited`);
      return JSON.parse(r.value);
    },
  };
}

/** What a TCP probe answers first through `url` (the address the connection came from), or null within `ms`. */
async function greeting(url: string, ms = 5000): Promise<string | null> {
  const { hostname, port } = new URL(`tcp://${url}`);
  const c = await Deno.connect({ hostname, port: Number(port) });
  const buf = new Uint8Array(64);
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    const n = await Promise.race([c.read(buf), new Promise<null>((r) => timer = setTimeout(() => r(null), ms))]);
    return n === null ? null : new TextDecoder().decode(buf.subarray(0, n)).trim();
  } catch {
    return null;
  } finally {
    clearTimeout(timer);
    c.close();
  }
}

Deno.test(
  "hosts: forwards arrive from the client host; a cut link and a blackhole route stop traffic",
  opts,
  async () => {
    await using hosts = await Hosts.create(["a", "b", "c"]);
    const [a, b, c] = hosts.hosts;
    assert.equal(new Set(hosts.hosts.map((h) => h.address)).size, 3);
    const range = hosts.subnet.replace(/\.0\/24$/, ".");
    assert.ok(hosts.hosts.every((h) => h.address.startsWith(range)));
    const rootAddrs = new TextDecoder().decode(
      (await new Deno.Command("ip", { args: ["-4", "-o", "addr", "show"], stdout: "piped" }).output()).stdout,
    );
    assert.ok(!rootAddrs.includes(range), "no address of the range in the root namespace");
    const rootNames = await rootLinks();
    assert.ok(hosts.namespaces.every((n) => !rootNames.some((l) => l.startsWith(n))), "no link in the root namespace");
    const echoA = probe(hosts, a, ["tcp", a.address]);
    const echoB = probe(hosts, b, ["tcp", b.address]);
    const udpA = probe(hosts, a, ["udp", a.address]);
    try {
      const portA = (await echoA.next() as { port: number }).port;
      const portB = (await echoB.next() as { port: number }).port;
      const udpPortA = (await udpA.next() as { port: number }).port;
      const cToA = await hosts.forward(c, `${a.address}:${portA}`);
      assert.match(cToA, /^127\.0\.0\.1:\d+$/);
      assert.equal(await greeting(cToA), c.address, "the connection comes from c's address");
      const url = await hosts.forward(c, `ws://${a.address}:${portA}/x?y`);
      assert.match(url, /^ws:\/\/127\.0\.0\.1:\d+\/x\?y$/);

      // A cut link: nothing gets through until it is healed.
      await hosts.cut(a);
      assert.equal(await greeting(cToA, 1500), null, "no answer across a cut link");
      await hosts.heal(a);
      await waitFor("a reachable again after heal", async () => await greeting(cToA) === c.address, 15_000);

      // a blackholes b: a cannot reach b, still reaches c's targets; b's packets still arrive at a.
      const aToB = await hosts.forward(a, `${b.address}:${portB}`);
      const cToB = await hosts.forward(c, `${b.address}:${portB}`);
      assert.equal(await greeting(aToB), a.address);
      await hosts.block(a, b);
      assert.equal(await greeting(aToB, 1500), null, "a reaches nothing at b");
      assert.equal(await greeting(cToB), c.address, "c still reaches b");
      assert.equal(await greeting(cToA), c.address, "c still reaches a");
      const sendAB = probe(hosts, a, ["send", b.address, "9"]);
      const sent = await sendAB.next() as { error?: string };
      assert.ok(sent.error, `a's datagram to b is refused by the route: ${JSON.stringify(sent)}`);
      await sendAB.child.status;
      const sendBA = probe(hosts, b, ["send", a.address, String(udpPortA)]);
      assert.deepEqual(await sendBA.next(), { sent: true });
      assert.deepEqual(await udpA.next(), { from: b.address }, "b's datagram reaches a");
      await sendBA.child.status;
      await hosts.unblock(a, b);
      await waitFor("a reaches b after unblock", async () => await greeting(aToB) === a.address, 15_000);
    } finally {
      for (const p of [echoA, echoB, udpA]) p.child.kill("SIGKILL");
      await Promise.all([echoA, echoB, udpA].map((p) => p.child.status));
    }
  },
);

Deno.test("hosts: a thrown error inside `await using` leaves no namespace or link behind", opts, async () => {
  let made: string[] = [];
  await assert.rejects(async () => {
    await using hosts = await Hosts.create(["x", "y"]);
    made = hosts.namespaces;
    assert.equal(made.length, 3);
    assert.ok(made.every((n) => n.startsWith(`sl${Deno.pid}x`) && n.length <= 15), made.join(" "));
    const listed = await namespaces();
    assert.ok(made.every((n) => listed.includes(n)), "made and listed");
    throw new Error("the test failed");
  }, /the test failed/);
  const listed = await namespaces();
  assert.deepEqual(made.filter((n) => listed.includes(n)), [], "namespaces removed");
  const links = await rootLinks();
  assert.deepEqual(links.filter((l) => made.some((n) => l.startsWith(n))), [], "no link in the root namespace");
});

/** A process that makes two hosts, prints their namespaces and waits to be killed. */
function holder(): { child: Deno.ChildProcess; made: Promise<string[]> } {
  const code = `import { Hosts } from "${HOSTS}";
const h = await Hosts.create(["p", "q"]);
console.log(JSON.stringify(h.namespaces));
setInterval(() => {}, 1000);`;
  const child = new Deno.Command(Deno.execPath(), { args: ["eval", code], stdout: "piped", stdin: "null" }).spawn();
  const made = (async () => {
    const r = await child.stdout.pipeThrough(new TextDecoderStream()).pipeThrough(splitLines()).getReader().read();
    if (r.done) throw new Error("the holder exited before making its hosts");
    return JSON.parse(r.value) as string[];
  })();
  return { child, made };
}

Deno.test("hosts: SIGTERM removes a process's hosts; a SIGKILLed one's are swept by the next run", opts, async () => {
  const termed = holder();
  const killed = holder();
  try {
    const [t, k] = await within("both holders' hosts", Promise.all([termed.made, killed.made]), 20_000);
    assert.ok(t.every((n) => n.startsWith(`sl${termed.child.pid}x`)));
    // Other test files sweep when they make hosts: none may take the SIGKILLed holder's before this test looks.
    await underSweepLock(async (sweep) => {
      termed.child.kill("SIGTERM");
      killed.child.kill("SIGKILL");
      await Promise.all([termed.child.status, killed.child.status]);
      assert.ok(!isAlive(killed.child.pid));
      const listed = await namespaces();
      assert.deepEqual(t.filter((n) => listed.includes(n)), [], "the SIGTERMed holder removed its own");
      assert.deepEqual(k.filter((n) => !listed.includes(n)), [], "the SIGKILLed holder's are still there");
      const swept = await sweep();
      assert.ok(k.every((n) => swept.includes(n)), `swept ${swept.join(" ")}`);
    });
    const after = await namespaces();
    assert.deepEqual(k.filter((n) => after.includes(n)), []);
  } finally {
    for (const h of [termed, killed]) {
      try {
        h.child.kill("SIGKILL");
      } catch {
        // exited
      }
    }
  }
});
