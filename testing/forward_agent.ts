/**
 * The half of a forward (hosts_forward.ts) that runs inside a client host's namespace: for each JSON line
 * `{"path", "hostname", "port"}` on stdin it listens on the unix socket `path` and pipes every connection made
 * there to `hostname:port`, so the connection reaches the target from this namespace's address. It answers each
 * line with `{"listening": path}` on stdout and exits when stdin ends (its parent is gone).
 */
import { errorText } from "../core/errors.ts";
import { splitLines } from "../cli/local_cluster.ts";
import { closeQuietly, splice } from "./hosts_forward.ts";

/** How long a connection to the target may take before the unix side is closed instead. */
const CONNECT_TIMEOUT_MS = 5000;

interface Rule {
  path: string;
  hostname: string;
  port: number;
}

async function connectWithin(rule: Rule): Promise<Deno.Conn | null> {
  const pending = Deno.connect({ hostname: rule.hostname, port: rule.port });
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<null>((r) => timer = setTimeout(() => r(null), CONNECT_TIMEOUT_MS));
  try {
    const got = await Promise.race([pending, late]);
    // A connect that completes after we gave up is closed at once.
    if (got === null) pending.then(closeQuietly, () => {});
    return got;
  } catch {
    return null;
  } finally {
    clearTimeout(timer);
  }
}

async function serve(rule: Rule): Promise<void> {
  const listener = Deno.listen({ transport: "unix", path: rule.path });
  console.log(JSON.stringify({ listening: rule.path }));
  for await (const local of listener) {
    (async () => {
      const remote = await connectWithin(rule);
      if (remote === null) return closeQuietly(local);
      await splice(local, remote);
    })();
  }
}

for await (const line of Deno.stdin.readable.pipeThrough(new TextDecoderStream()).pipeThrough(splitLines())) {
  if (line.trim() === "") continue;
  serve(JSON.parse(line) as Rule).catch((e) => {
    console.error(`forward agent: ${line}: ${errorText(e)}`);
    Deno.exit(1);
  });
}
Deno.exit(0);
