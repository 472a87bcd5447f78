/**
 * Raw HTTP/1.1 over TCP for the admin tests: fetch always sends its own Host
 * header, and the slow-client tests need to send half a request.
 */

/** An answer read off a raw connection. */
export interface RawResponse {
  status: number;
  /** Header names lower-cased. */
  headers: Map<string, string>;
  body: string;
  /** The body parsed as JSON, or undefined when it is not JSON. */
  json: unknown;
}

/** host:port of an admin base URL such as http://127.0.0.1:8080. */
export function addressOf(admin: string): { hostname: string; port: number } {
  const u = new URL(admin);
  return { hostname: u.hostname.replace(/^\[|\]$/g, ""), port: Number(u.port) };
}

/**
 * Sends `request` (a whole request, head and body, as text) on a new
 * connection and reads until the server closes it; the request should carry
 * `Connection: close`. Rejects after `timeoutMs`.
 */
export async function rawRequest(admin: string, request: string, timeoutMs = 5000): Promise<RawResponse> {
  const conn = await Deno.connect(addressOf(admin));
  const timer = setTimeout(() => conn.close(), timeoutMs);
  try {
    await conn.write(new TextEncoder().encode(request));
    const chunks: Uint8Array[] = [];
    const buf = new Uint8Array(16 * 1024);
    for (;;) {
      let n: number | null;
      try {
        n = await conn.read(buf);
      } catch (e) {
        if (chunks.length > 0 && e instanceof Deno.errors.ConnectionReset) break;
        throw e;
      }
      if (n === null) break;
      chunks.push(buf.slice(0, n));
    }
    return parseResponse(new TextDecoder().decode(concat(chunks)));
  } finally {
    clearTimeout(timer);
    try {
      conn.close();
    } catch {
      // closed by the timer
    }
  }
}

/** A GET request head with the given Host (null: none) and extra header lines. */
export function get(path: string, host: string | null, extra: string[] = [], version = "1.1"): string {
  const lines = [`GET ${path} HTTP/${version}`, ...(host === null ? [] : [`Host: ${host}`]), ...extra];
  return `${lines.join("\r\n")}\r\nConnection: close\r\n\r\n`;
}

function concat(chunks: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}

function parseResponse(text: string): RawResponse {
  const end = text.indexOf("\r\n\r\n");
  if (end < 0) throw new Error(`no complete response head in ${JSON.stringify(text.slice(0, 200))}`);
  const [statusLine, ...lines] = text.slice(0, end).split("\r\n");
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1]);
  const headers = new Map<string, string>();
  for (const l of lines) {
    const i = l.indexOf(":");
    headers.set(l.slice(0, i).trim().toLowerCase(), l.slice(i + 1).trim());
  }
  let body = text.slice(end + 4);
  if (headers.get("transfer-encoding")?.toLowerCase() === "chunked") body = dechunk(body);
  let json: unknown = undefined;
  try {
    json = JSON.parse(body);
  } catch {
    // not JSON
  }
  return { status, headers, body, json };
}

function dechunk(text: string): string {
  let out = "";
  let at = 0;
  for (;;) {
    const eol = text.indexOf("\r\n", at);
    if (eol < 0) return out;
    const size = parseInt(text.slice(at, eol), 16);
    if (!(size > 0)) return out;
    out += text.slice(eol + 2, eol + 2 + size);
    at = eol + 2 + size + 2;
  }
}
