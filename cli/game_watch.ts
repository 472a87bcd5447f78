/**
 * `--watch` (docs/operations.md#reloading-the-game): the local cluster watches the game's folder and, once its
 * files have been quiet for a moment after a change, asks the cellappmgr to reload the game everywhere
 * (POST /api/game/reload), logging what came of it.
 */
import { errorText } from "../core/errors.ts";
import type { Logger } from "../core/log.ts";

/** How long the files must be quiet after a change before the reload is asked for. */
export const WATCH_DEBOUNCE_MS = 300;

/** Watches `folder` and reloads through the admin API at `admin`; returns what stops it. */
export function watchGame(folder: string, admin: string, token: string | null, log: Logger): () => void {
  const watcher = Deno.watchFs(folder, { recursive: true });
  let timer: ReturnType<typeof setTimeout> | undefined;
  let running: Promise<void> | null = null;
  let again = false;
  const reload = async () => {
    if (running) return void (again = true);
    running = (async () => {
      try {
        const res = await fetch(`${admin}/api/game/reload`, {
          method: "POST",
          headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) },
        });
        const body = await res.json() as { version?: string; error?: { message: string } };
        if (res.ok) log.info(`--watch: the game was reloaded everywhere, version ${body.version}`);
        else log.warn(`--watch: ${body.error?.message ?? `the reload answered ${res.status}`}`);
      } catch (e) {
        log.warn(`--watch: cannot ask the cellappmgr to reload the game: ${errorText(e)}`);
      }
    })();
    await running;
    running = null;
    if (again) {
      again = false;
      await reload();
    }
  };
  (async () => {
    try {
      for await (const event of watcher) {
        if (event.kind === "access" || event.paths.every((p) => p.includes(".reload-"))) continue;
        clearTimeout(timer);
        timer = setTimeout(reload, WATCH_DEBOUNCE_MS);
      }
    } catch (e) {
      log.warn(`--watch: stopped watching ${folder}: ${errorText(e)}`);
    }
  })();
  log.info(`--watch: reloading the game when a file of ${folder} changes`);
  return () => {
    clearTimeout(timer);
    try {
      watcher.close();
    } catch {
      // already closed
    }
  };
}
