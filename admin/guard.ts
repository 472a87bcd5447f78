/**
 * What keeps web pages out of the admin API: the Host a request names (DNS
 * rebinding), the Origin it comes from (cross-site requests) and the media
 * type of anything that changes state (a form POST needs no CORS preflight,
 * a JSON one does).
 */
import type { Context, MiddlewareHandler } from "hono";
import { cors } from "hono/cors";
import { errorResponse } from "./errors.ts";

/** Host names every admin API answers to, whatever it is bound to. */
const LOOPBACK_NAMES = ["localhost", "127.0.0.1", "[::1]"];
const WILDCARDS = new Set(["0.0.0.0", "[::]"]);
const MUTATING = new Set(["POST", "PUT", "PATCH", "DELETE"]);

/**
 * The host name of a Host header value (`name`, `name:port`, `[v6]:port`),
 * lower-cased, IPv6 in brackets; null when it is not one.
 */
export function hostNameOf(value: string): string | null {
  if (value === "" || /[\s/\\?#@]/.test(value)) return null;
  try {
    return new URL(`http://${value}`).hostname;
  } catch {
    return null;
  }
}

/** An address as a Host header would carry it: IPv6 in brackets (a single colon is a port). */
function asHost(address: string): string {
  return address.indexOf(":") !== address.lastIndexOf(":") && !address.startsWith("[") ? `[${address}]` : address;
}

/** The `scheme://host[:port]` of an http(s) URL; null for anything else ("null" included). */
export function originOf(value: string): string | null {
  try {
    const u = new URL(value);
    return u.protocol === "http:" || u.protocol === "https:" ? u.origin : null;
  } catch {
    return null;
  }
}

/** Where the Host names the admin API accepts come from. */
export interface HostSources {
  /** The address the server is bound to (`--host`); null when unknown (in-process tests). */
  boundHost: string | null;
  /** Names from `--admin-hosts`. */
  extra: readonly string[];
  /** The machine's own addresses, used when bound to a wildcard; defaults to Deno.networkInterfaces(). */
  interfaces?: () => readonly string[];
}

/**
 * The set of Host names (ports ignored) the admin API answers to. Throws,
 * naming `--admin-hosts`, for an entry that is not a host name.
 */
export function allowedHostNames(src: HostSources): Set<string> {
  const names = new Set(LOOPBACK_NAMES);
  for (const h of src.extra) {
    const name = hostNameOf(asHost(h));
    if (name === null) throw new Error(`--admin-hosts: ${JSON.stringify(h)} is not a host name like ops.example.com`);
    names.add(name);
  }
  if (src.boundHost === null) return names;
  const bound = hostNameOf(asHost(src.boundHost));
  if (bound !== null) names.add(bound);
  if (bound !== null && WILDCARDS.has(bound)) {
    for (const a of (src.interfaces ?? interfaceAddresses)()) {
      // Zone ids (fe80::1%eth0) cannot appear in a Host header.
      const name = hostNameOf(asHost(a.replace(/%.*$/, "")));
      if (name !== null) names.add(name);
    }
  }
  return names;
}

function interfaceAddresses(): string[] {
  try {
    return Deno.networkInterfaces().map((i) => i.address);
  } catch {
    // Without --allow-sys only the loopback names and --admin-hosts are accepted.
    return [];
  }
}

/**
 * Refuses a request whose Host is not one of `allowed`: a page whose name was
 * rebound to this machine's address sends its own name there.
 */
export function hostGuard(allowed: ReadonlySet<string>): MiddlewareHandler {
  return async (c, next) => {
    const host = c.req.header("host");
    if (host === undefined) {
      return errorResponse(c, 400, "bad_request", "the request has no Host header; HTTP/1.1 requires one");
    }
    const name = hostNameOf(host);
    if (name === null) {
      return errorResponse(c, 400, "bad_request", `the Host header ${JSON.stringify(host)} is not a host[:port]`);
    }
    if (!allowed.has(name)) {
      return errorResponse(
        c,
        403,
        "forbidden_host",
        `Host ${JSON.stringify(host)} is not a name this admin API answers to (a guard against DNS rebinding); ` +
          `if you reach it by that name, start the cellappmgr with --admin-hosts=${name}`,
      );
    }
    await next();
  };
}

/** The request's own origin: the scheme it came in on and its Host. */
function ownOrigin(url: string, host: string | undefined): string | null {
  return host === undefined ? null : originOf(`${new URL(url).protocol}//${host}`);
}

function forbiddenOrigin(origin: string): string {
  const o = originOf(origin);
  return o === null
    ? `requests from the web page origin ${JSON.stringify(origin)} are not allowed; only http(s) origins can be`
    : `requests from the web page origin ${JSON.stringify(origin)} are not allowed; to call the admin API from ` +
      `there, start the cellappmgr with --admin-origins=${o}`;
}

/**
 * CORS for the origins listed in `--admin-origins`: answers their preflights
 * (before the token check, as browsers send preflights without credentials)
 * and refuses the preflights of any other origin. Adds the CORS headers to
 * every answer to a listed origin, errors included, so its page can read them.
 */
export function corsGuard(listed: ReadonlySet<string>): MiddlewareHandler {
  const handler = cors({
    origin: (o) => listed.has(originOf(o) ?? "") ? o : null,
    allowMethods: ["GET", "POST", "PUT", "PATCH", "DELETE"],
    allowHeaders: ["Authorization", "Content-Type"],
    maxAge: 600,
  });
  return async (c, next) => {
    const origin = c.req.header("origin");
    if (origin === undefined) return await next();
    const o = originOf(origin);
    if (o !== null && listed.has(o)) return await handler(c, next);
    const preflight = c.req.method === "OPTIONS" && c.req.header("access-control-request-method") !== undefined;
    if (preflight && o !== ownOrigin(c.req.url, c.req.header("host"))) {
      return errorResponse(c, 403, "forbidden_origin", forbiddenOrigin(origin));
    }
    await next();
  };
}

/** Refuses a request sent from a web page of another origin than the API's own or a listed one. */
export function originGuard(listed: ReadonlySet<string>): MiddlewareHandler {
  return async (c, next) => {
    const origin = c.req.header("origin");
    if (origin !== undefined) {
      const o = originOf(origin);
      if (o === null || (!listed.has(o) && o !== ownOrigin(c.req.url, c.req.header("host")))) {
        return errorResponse(c, 403, "forbidden_origin", forbiddenOrigin(origin));
      }
    }
    await next();
  };
}

/**
 * Requires `Content-Type: application/json` on every request that changes
 * state, an empty body included: browsers send forms and text/plain across
 * sites without asking, but JSON only after a CORS preflight.
 */
export function jsonGuard(): MiddlewareHandler {
  return async (c, next) => {
    if (MUTATING.has(c.req.method)) {
      const type = c.req.header("content-type");
      if (type === undefined || type.split(";")[0].trim().toLowerCase() !== "application/json") {
        return errorResponse(
          c,
          415,
          "unsupported_media_type",
          `${c.req.method} requests need the header Content-Type: application/json, also with an empty body ` +
            `(got ${type === undefined ? "none" : JSON.stringify(type)})`,
        );
      }
    }
    await next();
  };
}

/**
 * The body limit, chunked bodies included: reads at most `maxBytes` and
 * answers 413 past them. Unlike hono/body-limit it rebuilds the request from
 * its URL, so it works with any request object (the node:http adapter's
 * included).
 */
export function bodyGuard(maxBytes: number, tooLarge: (c: Context) => Response): MiddlewareHandler {
  return async (c, next) => {
    const raw = c.req.raw;
    const length = raw.headers.get("content-length");
    const chunked = raw.headers.has("transfer-encoding");
    if (!raw.body) return await next();
    if (length !== null && !chunked) return Number(length) > maxBytes ? tooLarge(c) : await next();
    const parts: Uint8Array[] = [];
    let size = 0;
    const reader = raw.body.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.length;
      if (size > maxBytes) {
        reader.cancel().catch(() => {});
        return tooLarge(c);
      }
      parts.push(value);
    }
    const body = new Uint8Array(size);
    let at = 0;
    for (const p of parts) {
      body.set(p, at);
      at += p.length;
    }
    const headers = new Headers(raw.headers);
    headers.delete("transfer-encoding");
    headers.set("content-length", String(size));
    c.req.raw = new Request(c.req.url, { method: raw.method, headers, body });
    await next();
  };
}
