/**
 * The demo's page server: the page's files, where to play (`/config.json`), and the space's cells (`/layout`),
 * which it reads from the admin API with the token the page never sees.
 */
import { join } from "node:path";

/** A cell as the page draws it: its id, its cellapp, and its rect `[minX, minZ, maxX, maxZ]`. */
export interface LayoutCell {
  id: number;
  cellapp: number;
  rect: [number, number, number, number];
}

/** What the page is told at start. */
export interface PageConfig {
  /** The baseapp's client URL. */
  server: string;
  /** The demo's space and its bounds `[minX, minZ, maxX, maxZ]`. */
  spaceId: number;
  bounds: [number, number, number, number];
}

/** Where the page server finds things. */
export interface PageServerOptions {
  hostname: string;
  port: number;
  /** The folders of the page's own files and of the bundle (app.js). */
  webDir: string;
  bundleDir: string;
  config: PageConfig;
  /** The admin API's base URL and its bearer token. */
  admin: string;
  adminToken: string;
}

const TYPES: Record<string, string> = { html: "text/html; charset=utf-8", js: "text/javascript; charset=utf-8" };
/** How long a layout read from the admin API is served again (the page polls every second or two). */
const LAYOUT_TTL_MS = 500;
/** How long a layout read may take before the page is told it is unavailable (and polls again). */
const LAYOUT_TIMEOUT_MS = 5_000;

/** Serves the demo's page until the returned server is shut down. */
export function servePage(opts: PageServerOptions): Deno.HttpServer<Deno.NetAddr> {
  let cached: { at: number; body: Promise<string> } | null = null;
  const layout = (): Promise<string> => {
    if (cached && Date.now() - cached.at < LAYOUT_TTL_MS) return cached.body;
    const body = readLayout(opts.admin, opts.adminToken, opts.config.spaceId);
    cached = { at: Date.now(), body };
    body.catch(() => (cached = null));
    return body;
  };
  const files: Record<string, string> = {
    "/": join(opts.webDir, "index.html"),
    "/index.html": join(opts.webDir, "index.html"),
    "/view.js": join(opts.webDir, "view.js"),
    "/app.js": join(opts.bundleDir, "app.js"),
  };
  return Deno.serve({ hostname: opts.hostname, port: opts.port, onListen: () => {} }, async (req) => {
    if (req.method !== "GET") return new Response("only GET\n", { status: 405 });
    const path = new URL(req.url).pathname;
    if (path === "/config.json") return Response.json(opts.config);
    if (path === "/layout") {
      try {
        return new Response(await layout(), { headers: { "content-type": "application/json" } });
      } catch (e) {
        return new Response(`layout unavailable: ${(e as Error).message}\n`, { status: 502 });
      }
    }
    const file = files[path];
    if (!file) return new Response("not found\n", { status: 404 });
    const type = TYPES[file.split(".").pop()!] ?? "text/plain";
    return new Response(await Deno.readFile(file), { headers: { "content-type": type, "cache-control": "no-store" } });
  });
}

/** The cells of space `spaceId` as `{"cells": LayoutCell[]}` JSON, from GET /api/spaces/:id. */
async function readLayout(admin: string, token: string, spaceId: number): Promise<string> {
  const res = await fetch(`${admin}/api/spaces/${spaceId}`, {
    headers: { authorization: `Bearer ${token}` },
    signal: AbortSignal.timeout(LAYOUT_TIMEOUT_MS),
  });
  if (!res.ok) throw new Error(`GET /api/spaces/${spaceId}: ${res.status} ${await res.text()}`);
  const space = await res.json() as { cells: LayoutCell[] };
  const cells = space.cells.map(({ id, cellapp, rect }) => ({ id, cellapp, rect }));
  return JSON.stringify({ cells });
}
