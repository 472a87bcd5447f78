/**
 * A small network probe run inside a test host (hosts_test.ts), printing one JSON line per event on stdout:
 * - `tcp ADDR`: listens on ADDR:0 (`{"port"}`); each connection gets the address it came from and a newline, then
 *   an echo of what it sends.
 * - `udp ADDR`: listens on ADDR:0 (`{"port"}`) and prints `{"from"}` for each datagram.
 * - `send HOST PORT`: sends one datagram and prints `{"sent": true}` or `{"error"}`. Needs `--unstable-net`.
 */
const [mode, a, b] = Deno.args;
if (mode === "tcp") {
  const l = Deno.listen({ hostname: a, port: 0 });
  console.log(JSON.stringify({ port: l.addr.port }));
  for await (const c of l) {
    (async () => {
      await c.write(new TextEncoder().encode(`${(c.remoteAddr as Deno.NetAddr).hostname}\n`));
      await c.readable.pipeTo(c.writable);
    })().catch(() => {});
  }
} else if (mode === "udp") {
  const l = Deno.listenDatagram({ transport: "udp", hostname: a, port: 0 });
  console.log(JSON.stringify({ port: (l.addr as Deno.NetAddr).port }));
  for await (const [, from] of l) console.log(JSON.stringify({ from: (from as Deno.NetAddr).hostname }));
} else if (mode === "send") {
  const s = Deno.listenDatagram({ transport: "udp", hostname: "0.0.0.0", port: 0 });
  try {
    await s.send(new Uint8Array([1]), { transport: "udp", hostname: a, port: Number(b) });
    console.log(JSON.stringify({ sent: true }));
  } catch (e) {
    console.log(JSON.stringify({ error: (e as Error).message }));
  }
  s.close();
} else {
  console.error(`probe: unknown mode ${mode}`);
  Deno.exit(2);
}
