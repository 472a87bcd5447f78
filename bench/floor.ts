/**
 * `deno task bench floor [--clients=500] [--seconds=20] [--bytes=40] [--down=B] [--only=deno-ws,node-ws]`: what the
 * peer scenario's sockets alone cost a server, with no game in it, in Deno and in Node side by side. Each client sends
 * a message 10 times a second (in 10 send groups, as the peer scenario's moves) and gets one at each 100 ms tick (its
 * frame), over raw TCP and over WebSocket; the server only counts and drops what it reads. Server CPU is read from
 * /proc over the window, as the peer harness reads Colyseus's. It is the floor under the relay the baseapp does for
 * each client, against which the peer benchmark's figures can be read: a server cannot cost less per client than its
 * sockets. The `deno-relay` variant is the floor of our split into processes: the WebSocket server forwarding every
 * message to a second process, which sends each client its frame every tick (bench/lib/floor_relay.ts).
 */
import { parseArgs } from "node:util";
import { cpuSeconds, rssMB } from "./lib/procs.ts";
import { writeResults } from "./results.ts";
import { figure as f, giveUpAfter, numberFlag } from "./lib/run.ts";

/** One server under test: which runtime, which protocol, how it is started. */
interface Variant {
  /** Short name for --only. */
  id: string;
  name: string;
  runtime: "Deno" | "Node";
  /** What the load generator speaks. */
  proto: "tcp" | "ws";
  /**
   * Which server of its runtime's script: floor_server.ts --variant, or floor_node.mjs --proto. `relay` is two
   * processes (floor_relay.ts), its front started with the port of its `back`: its CPU and memory are both
   * processes'.
   */
  server: "tcp" | "ws" | "ws-epoll" | "serve" | "relay" | "back";
}

const here = new URL("./lib/", import.meta.url).pathname;
const deno = Deno.execPath();

const VARIANTS: Variant[] = [
  { id: "deno-tcp", name: "raw TCP (Deno.listen / node:net)", runtime: "Deno", proto: "tcp", server: "tcp" },
  { id: "node-tcp", name: "raw TCP (Deno.listen / node:net)", runtime: "Node", proto: "tcp", server: "tcp" },
  { id: "deno-ws", name: "WebSocket: the baseapp's own server (core/ws)", runtime: "Deno", proto: "ws", server: "ws" },
  {
    id: "deno-ws-epoll",
    name: "WebSocket: the baseapp's own server on epoll sockets (core/ws, core/net)",
    runtime: "Deno",
    proto: "ws",
    server: "ws-epoll",
  },
  {
    id: "deno-serve",
    name: "WebSocket: Deno.serve + Deno.upgradeWebSocket",
    runtime: "Deno",
    proto: "ws",
    server: "serve",
  },
  { id: "node-ws", name: "WebSocket: a minimal server on node:net", runtime: "Node", proto: "ws", server: "ws" },
  {
    id: "deno-relay",
    name:
      "WebSocket relayed through a second process (core/ws front on epoll sockets, TCP back: a baseapp and a cellapp, no game)",
    runtime: "Deno",
    proto: "ws",
    server: "relay",
  },
];

/** The command line of variant `v`'s server: bench/lib/floor_server.ts on Deno, bench/lib/floor_node.mjs on Node. */
function serverArgs(v: Variant, bytes: number, down: number, back?: number): string[] {
  return v.runtime === "Deno"
    ? [
      deno,
      "run",
      "-A",
      `${here}floor_server.ts`,
      `--variant=${v.server}`,
      `--bytes=${bytes}`,
      `--down=${down}`,
      ...(back === undefined ? [] : [`--back=${back}`]),
    ]
    : ["node", `${here}floor_node.mjs`, "server", `--proto=${v.server}`, `--bytes=${bytes}`, `--down=${down}`];
}

/** What the load generator reports at the end of its window. */
interface LoadReport {
  clients: number;
  sentPerClientSec: number;
  receivedPerClientSec: number;
  receivedBytesPerClientSec: number;
}

interface Measured {
  variant: Variant;
  cores: number;
  /** Share of a core per process, in the order started (the relay's back, then its front). */
  coresEach: number[];
  msPerClientSec: number;
  rssMB: number;
  load: LoadReport;
}

/** Processes started and not yet stopped: killed by pid if the run passes its time limit. */
const running = new Set<number>();

/** Yields the lines a child writes to stdout. */
async function* lines(stream: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  let rest = "";
  for await (const chunk of stream.pipeThrough(new TextDecoderStream())) {
    rest += chunk;
    let nl: number;
    while ((nl = rest.indexOf("\n")) >= 0) {
      yield rest.slice(0, nl);
      rest = rest.slice(nl + 1);
    }
  }
  if (rest) yield rest;
}

function start(argv: string[]): Deno.ChildProcess {
  const child = new Deno.Command(argv[0], { args: argv.slice(1), stdout: "piped", stderr: "inherit" }).spawn();
  running.add(child.pid);
  return child;
}

function stop(child: Deno.ChildProcess): Promise<unknown> {
  try {
    child.kill("SIGKILL");
  } catch {
    // already gone
  }
  running.delete(child.pid);
  return child.status;
}

/** Starts a server and reads the port it prints first. */
async function startServer(argv: string[], what: string): Promise<{ child: Deno.ChildProcess; port: number }> {
  const child = start(argv);
  const first = (await lines(child.stdout).next()).value ?? "";
  const port = Number(/^PORT (\d+)$/.exec(first)?.[1]);
  if (!port) {
    await stop(child);
    throw new Error(`${what}: the server printed ${JSON.stringify(first)}, not its port`);
  }
  return { child, port };
}

/** Runs variant `v` under the load: clients send `bytes` 10 times a second, the server sends `down` per tick. */
async function measure(v: Variant, clients: number, seconds: number, bytes: number, down = bytes): Promise<Measured> {
  const what = `${v.runtime} ${v.name}`;
  const servers: Deno.ChildProcess[] = [];
  try {
    let back: number | undefined;
    if (v.server === "relay") {
      const b = await startServer(serverArgs({ ...v, server: "back" }, bytes, down), what);
      servers.push(b.child);
      back = b.port;
    }
    const front = await startServer(serverArgs(v, bytes, down, back), what);
    servers.push(front.child);
    const pids = servers.map((c) => c.pid);
    const cpuEach = () => pids.map((pid) => cpuSeconds(pid) ?? NaN);
    const rss = () => pids.reduce((sum, pid) => sum + rssMB(pid), 0);
    const load = start([
      "node",
      `${here}floor_node.mjs`,
      "load",
      `--proto=${v.proto}`,
      `--port=${front.port}`,
      `--clients=${clients}`,
      `--seconds=${seconds}`,
      `--bytes=${bytes}`,
    ]);
    try {
      let cpu0: number[] = [], t0 = 0, peak = 0;
      let sampler: ReturnType<typeof setInterval> | undefined;
      for await (const line of lines(load.stdout)) {
        if (line === "START") {
          cpu0 = cpuEach();
          t0 = performance.now();
          sampler = setInterval(() => peak = Math.max(peak, rss()), 1000);
        } else if (line.startsWith("END ")) {
          const s = (performance.now() - t0) / 1000;
          const coresEach = cpuEach().map((c, i) => (c - cpu0[i]) / s);
          const cores = coresEach.reduce((a, b) => a + b, 0);
          clearInterval(sampler);
          peak = Math.max(peak, rss());
          const report = JSON.parse(line.slice(4)) as LoadReport;
          return {
            variant: v,
            cores,
            coresEach,
            msPerClientSec: (cores * 1000) / report.clients,
            rssMB: peak,
            load: report,
          };
        }
      }
      throw new Error(`${what}: the load generator ended without its figures`);
    } finally {
      await stop(load);
    }
  } finally {
    for (const c of servers) await stop(c);
  }
}

/** The floor under our baseapp, for `bench peer`: the core/ws server at the scene's traffic; the pids it runs now. */
export const baseappFloor = {
  /**
   * Measures the core/ws variant on the sockets the baseapp uses by default, epoll ones (or, with `variant`
   * "deno-relay", the two-process relay, whose front uses them too) with `clients` for `seconds`: each client sends
   * `up` bytes 10 times a second, and gets `down` bytes at each tick.
   */
  async measure(
    clients: number,
    seconds: number,
    up: number,
    down: number,
    variant: "deno-ws" | "deno-ws-epoll" | "deno-relay" = "deno-ws-epoll",
  ): Promise<{ msPerClientSec: number; rssMB: number }> {
    if (!hasNode()) throw new Error("the socket floor needs `node` on the PATH for its load generator");
    const m = await measure(VARIANTS.find((v) => v.id === variant)!, clients, seconds, up, down);
    return { msPerClientSec: m.msPerClientSec, rssMB: m.rssMB };
  },
  /** The floor's processes running now (to kill by pid if the caller's run passes its limit). */
  pids(): number[] {
    return [...running];
  },
};

function hasNode(): boolean {
  try {
    return new Deno.Command("node", { args: ["--version"], stdout: "null", stderr: "null" }).outputSync().success;
  } catch {
    return false;
  }
}

/** Runs the benchmark and writes its section of bench/RESULTS.md. */
export async function run(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    strict: true,
    options: {
      clients: { type: "string", default: "500" },
      seconds: { type: "string", default: "20" },
      bytes: { type: "string", default: "40" },
      down: { type: "string" },
      only: { type: "string" },
    },
  });
  const clients = numberFlag("clients", values.clients, 1, 5000);
  const seconds = numberFlag("seconds", values.seconds, 1, 600);
  const bytes = numberFlag("bytes", values.bytes, 1, 125);
  const down = values.down === undefined ? bytes : numberFlag("down", values.down, 1, 65_535);
  const only = values.only?.split(",");
  const unknown = only?.filter((id) => !VARIANTS.some((v) => v.id === id));
  if (unknown?.length) {
    throw new Error(`--only: no variant ${unknown.join(", ")}; there are ${VARIANTS.map((v) => v.id).join(", ")}`);
  }
  const variants = only ? VARIANTS.filter((v) => only.includes(v.id)) : VARIANTS;
  // The load generator runs on Node (lighter than the server under test, and the same for every variant).
  if (!hasNode()) throw new Error("bench floor needs `node` on the PATH for its load generator");
  const stopWatch = giveUpAfter("floor", variants.length * (seconds + 90) * 1000, () => [...running]);
  const rows: Measured[] = [];
  try {
    for (const v of variants) {
      console.error(`floor bench: ${v.runtime}, ${v.name}: ${clients} clients, ${seconds} s`);
      rows.push(await measure(v, clients, seconds, bytes, down));
    }
  } finally {
    stopWatch();
  }
  const nodeOf = (proto: string) => rows.find((r) => r.variant.runtime === "Node" && r.variant.proto === proto);
  const md = [
    `The peer scenario's sockets with no game: ${clients} clients each send a ${bytes}-byte message 10 times a second`,
    `(10 send groups, 10 ms apart) and get one ${down}-byte message at each 100 ms tick; the server counts and`,
    `drops what it reads. ${seconds} s measured after a 3 s warm-up; server CPU from /proc (utime + stime) over the`,
    "window, one core = 100 %; the load generator is one Node process for every variant. The last column divides by",
    "the Node server of the same protocol in the same run. The relay is two processes: its figures are both summed,",
    "its front (the baseapp's part: the WebSocket server and the forwarding) and back (the cellapp's) in brackets.",
    "",
    "| server | runtime | CPU (one core = 100 %) | CPU ms per client-s | peak RSS MB | messages in / out per client-s | vs Node |",
    "|---|---|---:|---:|---:|---:|---:|",
    ...rows.map((r) => {
      const node = nodeOf(r.variant.proto);
      const each = r.coresEach.length === 2
        ? ` (front ${f(r.coresEach[1] * 100, 1)}, back ${f(r.coresEach[0] * 100, 1)})`
        : "";
      return `| ${r.variant.name} | ${r.variant.runtime} | ${f(r.cores * 100, 1)} %${each} | ${
        f(r.msPerClientSec, 3)
      } | ${f(r.rssMB)} | ${f(r.load.sentPerClientSec, 1)} / ${f(r.load.receivedPerClientSec, 1)} | ${
        node ? (r.msPerClientSec / node.msPerClientSec).toFixed(2) : "n/a"
      } |`;
    }),
  ].join("\n");
  console.log(md);
  // A partial run would replace the whole comparison: only a run of every variant is recorded.
  if (only) console.error("floor bench: --only: not written to bench/RESULTS.md");
  else await writeResults("floor", md);
}
