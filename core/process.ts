/** What every server process does the same way: announce readiness and stop on signals. */

/** What a process announces on stdout once it serves: one JSON line. */
export interface ReadyInfo {
  role: string;
  pid: number;
  /** Listening address for other processes. */
  address?: string;
  /** Admin API base URL (cellappmgr, local cluster). */
  admin?: string;
  [key: string]: unknown;
}

/**
 * Prints `{"ready": info}` as one line on stdout. Logs go to stderr, so a
 * parent process or a test reads stdout line by line to learn addresses and
 * ports chosen at run time.
 */
export function announceReady(info: ReadyInfo): void {
  console.log(JSON.stringify({ ready: info }));
}

/**
 * Prints `{"shutdown": info}` as one line on stdout: the cellappmgr tells the
 * local cluster that a cluster shutdown has begun, so that it restarts no
 * child from then on.
 */
export function announceShutdown(info: { pid: number }): void {
  console.log(JSON.stringify({ shutdown: info }));
}

/** Whether `line` is the line announceShutdown prints. */
export function isShutdownLine(line: string): boolean {
  return line.startsWith('{"shutdown"');
}

/**
 * Runs `stop` once on SIGINT or SIGTERM; later signals are ignored while it
 * runs (a terminal's Ctrl-C reaches a local cluster's children twice: from the
 * terminal and from the parent). A stop that hangs exits with status 1.
 */
export function onStopSignal(
  stop: (why: string) => void | Promise<void>,
  hardLimitMs = 15_000,
): void {
  let stopping = false;
  const handler = (signal: Deno.Signal) => () => {
    if (stopping) return;
    stopping = true;
    setTimeout(() => {
      console.error(
        `still stopping ${hardLimitMs} ms after ${signal}; exiting`,
      );
      Deno.exit(1);
    }, hardLimitMs);
    stop(signal);
  };
  for (const s of ["SIGINT", "SIGTERM"] as const) {
    Deno.addSignalListener(s, handler(s));
  }
}

/** Environment variable that makes a child stop when its parent's end of stdin closes. */
export const PARENT_WATCH_ENV = "SEAMLESS_PARENT_WATCH";

/**
 * A child started by the local cluster or a test has its stdin piped from the
 * parent; when the parent dies, even by SIGKILL, stdin ends and the child
 * stops instead of running on as an orphan.
 */
export function watchParent(stop: (why: string) => void): void {
  if (Deno.env.get(PARENT_WATCH_ENV) !== "1") return;
  (async () => {
    const buf = new Uint8Array(256);
    try {
      while (
        (await Deno.stdin.read(buf)) !== null
      ) { /* nothing is sent on stdin */ }
    } catch {
      // A failing read means the same: the parent is gone.
    }
    stop("parent process gone");
  })();
}
