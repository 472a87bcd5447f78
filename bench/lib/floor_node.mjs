// Node side of `deno task bench floor` (bench/floor.ts): a socket server with no game in it, and the load generator
// for every server variant. Run by the benchmark with the machine's `node`; plain ESM, Node built-ins only.
//
//   node floor_node.mjs server --proto=tcp|ws --bytes=B [--down=D]   prints "PORT n", then serves until killed
//   node floor_node.mjs load --port=P --proto=tcp|ws --clients=N --seconds=D --warmup=W --bytes=B
//        prints "READY" once every client is connected, "START" and "END {json}" around the window, then exits
//
// Traffic (both sides): each client sends one B-byte message 10 times a second, in 10 groups whose timers are 10 ms
// apart (the peer scenario's moves); the server sends every client one D-byte message (D = B unless given) at each
// 100 ms tick (its frame). `tcp` frames are a 4-byte little-endian length and the payload; `ws` is RFC 6455 (binary messages, masked
// from the client).
import net from "node:net";
import { createHash, randomBytes } from "node:crypto";
import { parseArgs } from "node:util";

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: {
    proto: { type: "string", default: "tcp" },
    port: { type: "string", default: "0" },
    clients: { type: "string", default: "500" },
    seconds: { type: "string", default: "20" },
    warmup: { type: "string", default: "3" },
    bytes: { type: "string", default: "40" },
    down: { type: "string" },
  },
});
const mode = positionals[0];
const proto = values.proto;
const bytes = Number(values.bytes);
const down = Number(values.down ?? values.bytes);
if (!["tcp", "ws"].includes(proto) || !(bytes >= 1 && bytes < 126) || !(down >= 1 && down < 65536)) {
  console.error(
    `floor_node: --proto must be tcp or ws, --bytes 1-125 and --down 1-65535 (got ${proto}, ${values.bytes}, ${values.down})`,
  );
  process.exit(2);
}

/** One complete message's bytes for `proto`, from the server (`masked` false) or a client. */
function frameOf(masked, size) {
  if (proto === "tcp") {
    const f = Buffer.alloc(4 + size, 7);
    f.writeUInt32LE(size, 0);
    return f;
  }
  const head = size < 126 ? 2 : 4;
  // A zero mask leaves the payload as it is: the server still unmasks every byte.
  const f = Buffer.alloc(head + (masked ? 4 : 0) + size, 7);
  f[0] = 0x82;
  if (head === 2) f[1] = (masked ? 0x80 : 0) | size;
  else {
    f[1] = (masked ? 0x80 : 0) | 126;
    f.writeUInt16BE(size, 2);
  }
  if (masked) f.fill(0, head, head + 4);
  return f;
}

/** Splits a byte stream into messages and counts them; returns the bytes not yet a whole message. */
function parse(buf, onMessage) {
  let at = 0;
  for (;;) {
    if (proto === "tcp") {
      if (buf.length - at < 4) break;
      const len = buf.readUInt32LE(at);
      if (buf.length - at < 4 + len) break;
      onMessage(buf.subarray(at + 4, at + 4 + len));
      at += 4 + len;
    } else {
      if (buf.length - at < 2) break;
      const masked = (buf[at + 1] & 0x80) !== 0;
      let len = buf[at + 1] & 0x7f, head = 2;
      if (len === 126) {
        if (buf.length - at < 4) break;
        len = buf.readUInt16BE(at + 2);
        head = 4;
      } else if (len === 127) {
        if (buf.length - at < 10) break;
        len = Number(buf.readBigUInt64BE(at + 2));
        head = 10;
      }
      const maskAt = at + head;
      if (masked) head += 4;
      if (buf.length - at < head + len) break;
      const data = buf.subarray(at + head, at + head + len);
      if (masked) { for (let i = 0; i < len; i++) data[i] ^= buf[maskAt + (i & 3)]; }
      if ((buf[at] & 0x0f) === 0x2) onMessage(data);
      at += head + len;
    }
  }
  return at === buf.length ? null : buf.subarray(at);
}

/** Feeds a socket's chunks to `parse`, keeping a partial message for the next chunk. */
function reader(onMessage) {
  let rest = null;
  return (chunk) => {
    rest = parse(rest ? Buffer.concat([rest, chunk]) : chunk, onMessage);
  };
}

function serve() {
  const socks = new Set();
  const out = frameOf(false, down);
  const server = net.createServer({ noDelay: true }, (s) => {
    let read = (chunk) => {
      // WebSocket: the request head first, then frames.
      if (proto === "ws") {
        const text = chunk.toString("latin1");
        const end = text.indexOf("\r\n\r\n");
        if (end < 0) return s.destroy();
        const key = /sec-websocket-key:\s*(\S+)/i.exec(text)?.[1];
        if (!key) return s.destroy();
        const accept = createHash("sha1").update(key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").digest("base64");
        s.write(
          `HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\n\r\n`,
        );
        const frames = reader(() => {});
        read = frames;
        socks.add(s);
        if (chunk.length > end + 4) frames(chunk.subarray(end + 4));
        return;
      }
      read = reader(() => {});
      socks.add(s);
      read(chunk);
    };
    s.on("data", (c) => read(c));
    s.on("error", () => {});
    s.on("close", () => socks.delete(s));
  });
  server.listen(0, "127.0.0.1", () => console.log(`PORT ${server.address().port}`));
  setInterval(() => {
    for (const s of socks) s.write(out);
  }, 100);
}

async function load() {
  const port = Number(values.port), count = Number(values.clients);
  const seconds = Number(values.seconds), warmup = Number(values.warmup);
  const out = frameOf(true, bytes);
  let received = 0, receivedBytes = 0, sent = 0, closed = 0;
  const socks = [];
  const connectOne = () =>
    new Promise((resolve, reject) => {
      const s = net.connect({ port, host: "127.0.0.1", noDelay: true });
      s.on("error", reject);
      s.on("close", () => closed++);
      const frames = reader((m) => {
        received++;
        receivedBytes += m.length;
      });
      s.once("connect", () => {
        if (proto === "tcp") {
          s.on("data", frames);
          return resolve(s);
        }
        const key = randomBytes(16).toString("base64");
        s.write(
          `GET / HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
            `Sec-WebSocket-Key: ${key}\r\nSec-WebSocket-Version: 13\r\n\r\n`,
        );
        let head = Buffer.alloc(0);
        const onHead = (chunk) => {
          head = Buffer.concat([head, chunk]);
          const end = head.indexOf("\r\n\r\n");
          if (end < 0) return;
          if (!head.subarray(0, 12).toString().includes("101")) return reject(new Error(head.toString()));
          s.off("data", onHead);
          s.on("data", frames);
          if (head.length > end + 4) frames(head.subarray(end + 4));
          resolve(s);
        };
        s.on("data", onHead);
      });
    });
  for (let i = 0; i < count; i += 50) {
    const batch = [];
    for (let k = i; k < Math.min(count, i + 50); k++) batch.push(connectOne());
    socks.push(...await Promise.all(batch));
  }
  console.log("READY");
  // 10 send groups, their 100 ms timers 10 ms apart.
  for (let g = 0; g < 10; g++) {
    setTimeout(() =>
      setInterval(() => {
        for (let i = g; i < socks.length; i += 10) {
          socks[i].write(out);
          sent++;
        }
      }, 100), g * 10);
  }
  await new Promise((r) => setTimeout(r, warmup * 1000));
  const r0 = received, b0 = receivedBytes, s0 = sent;
  console.log("START");
  await new Promise((r) => setTimeout(r, seconds * 1000));
  console.log(
    `END ${
      JSON.stringify({
        clients: socks.length - closed,
        sentPerClientSec: (sent - s0) / socks.length / seconds,
        receivedPerClientSec: (received - r0) / socks.length / seconds,
        receivedBytesPerClientSec: (receivedBytes - b0) / socks.length / seconds,
      })
    }`,
  );
  process.exit(0);
}

if (mode === "server") serve();
else if (mode === "load") load().catch((e) => (console.error(`floor_node load: ${e.stack ?? e}`), process.exit(1)));
else {
  console.error("floor_node: first argument must be server or load");
  process.exit(2);
}
