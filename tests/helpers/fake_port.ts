/** A stranger's process port for the TLS tests: it speaks the handshake as a cellappmgr, proving what it is told to. */
import { ChannelMsg, FrameReader, FrameWriter, type HelloInfo, NONE } from "../../core/wire/mod.ts";
import { PROTOCOL_VERSION } from "../../core/version.ts";

/** Makes the welcome's proof from the dialler's hello (null: none). */
export type Welcome = (hello: HelloInfo) => Promise<Uint8Array | null>;

/**
 * A stranger's listener: sends a challenge, reads the hello, answers with a welcome whose proof `welcome` makes,
 * then at once a frame of an unknown kind that a peer decoding it would drop this one for.
 */
export function fakeListener(
  welcome: Welcome,
): { address: string; hello: Promise<HelloInfo>; close(): void } {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  let resolveHello!: (h: HelloInfo) => void;
  const hello = new Promise<HelloInfo>((r) => (resolveHello = r));
  const conns: Deno.Conn[] = [];
  (async () => {
    for await (const conn of l) {
      conns.push(conn);
      const w = new FrameWriter();
      const nonce = crypto.getRandomValues(new Uint8Array(16));
      w.push([ChannelMsg.challenge.kind, 0, { role: "cellappmgr", version: PROTOCOL_VERSION, nonce }]);
      await conn.write(w.take());
      const r = new FrameReader(4096);
      let frame: unknown = NONE;
      while (frame === NONE) {
        const n = await conn.read(r.space());
        if (n === null) return;
        r.commit(n);
        frame = r.next();
      }
      const h = (frame as unknown[])[2] as HelloInfo;
      resolveHello(h);
      const proof = await welcome(h);
      w.push([ChannelMsg.welcome.kind, 0, { role: "cellappmgr", pid: 1, address: "127.0.0.1:1", proof }]);
      w.push([999, 0, "decode me"]);
      await conn.write(w.take()).catch(() => {});
    }
  })().catch(() => {});
  return {
    address: `127.0.0.1:${l.addr.port}`,
    hello,
    close() {
      l.close();
      for (const c of conns) c.close();
    },
  };
}
