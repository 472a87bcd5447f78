/**
 * The HTTP part of a WebSocket server: finding the end of a request head in a bounded buffer, parsing it, deciding
 * whether it is an upgrade this server accepts (RFC 6455 section 4.2.1), and the few responses it ever sends.
 */

/** Largest request head accepted, in bytes; a bigger one gets 431. */
export const MAX_HEAD = 8 * 1024;

const GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const REQUEST_LINE = /^([!#$%&'*+.^_`|~0-9A-Za-z-]+) (\S+) HTTP\/(\d)\.(\d)$/;
const KEY = /^[A-Za-z0-9+/]{21}[AQgw]==$/;
// Field values: visible ASCII, obs-text, space and tab; no other control characters.
// deno-lint-ignore no-control-regex
const BAD_VALUE = /[\x00-\x08\x0a-\x1f\x7f]/;
const latin1 = new TextDecoder("latin1");
const ascii = new TextEncoder();

/** A parsed request head. */
export interface RequestHead {
  method: string;
  /** The request target as sent, e.g. "/" or "/game?x=1". */
  target: string;
  /** HTTP minor version times 1, major times 10: 11 for HTTP/1.1. */
  version: number;
  /** Field names in lower case; repeated fields joined with ", ". */
  headers: Map<string, string>;
}

/** What to do with a request head. */
export type HeadVerdict =
  | { kind: "upgrade"; head: RequestHead; key: string }
  | { kind: "refuse"; status: number; reason: string; extraHeaders?: string };

/**
 * Returns the index just past the blank line ending a head in `buf[0, end)`, or -1 when it is not there yet.
 * `from` is where new bytes start, so a search never rescans what it already scanned.
 */
export function findHeadEnd(buf: Uint8Array, from: number, end: number): number {
  for (let i = Math.max(3, from); i < end; i++) {
    if (buf[i] === 10 && buf[i - 1] === 13 && buf[i - 2] === 10 && buf[i - 3] === 13) return i + 1;
  }
  return -1;
}

/** Parses a request head (without the final blank line); returns why it is malformed instead when it is. */
export function parseHead(bytes: Uint8Array): RequestHead | string {
  const lines = latin1.decode(bytes).split("\r\n");
  while (lines.length > 0 && lines[lines.length - 1] === "") lines.pop();
  const m = REQUEST_LINE.exec(lines[0] ?? "");
  if (!m) return `malformed request line "${(lines[0] ?? "").slice(0, 80)}"`;
  const headers = new Map<string, string>();
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i];
    const colon = line.indexOf(":");
    if (colon <= 0) return `malformed header line "${line.slice(0, 80)}"`;
    const name = line.slice(0, colon);
    if (!TOKEN.test(name)) return `malformed header name "${name.slice(0, 80)}"`;
    const value = line.slice(colon + 1).trim();
    if (BAD_VALUE.test(value)) return `control character in header ${name}`;
    const key = name.toLowerCase();
    const had = headers.get(key);
    headers.set(key, had === undefined ? value : `${had}, ${value}`);
  }
  return { method: m[1], target: m[2], version: Number(m[3]) * 10 + Number(m[4]), headers };
}

/** True when the comma-separated header value holds `token` (case-insensitive). */
export function hasToken(value: string | undefined, token: string): boolean {
  if (!value) return false;
  for (const part of value.split(",")) {
    if (part.trim().toLowerCase() === token) return true;
  }
  return false;
}

/**
 * Decides what a head asks for: a WebSocket upgrade this server accepts, or a refusal with its status: 426 for a
 * request that is no WebSocket upgrade at all (or one of another protocol version), 400 for a broken handshake.
 */
export function judgeHead(bytes: Uint8Array): HeadVerdict {
  const head = parseHead(bytes);
  if (typeof head === "string") return { kind: "refuse", status: 400, reason: head };
  const h = head.headers;
  if (!hasToken(h.get("upgrade"), "websocket")) {
    return { kind: "refuse", status: 426, reason: "not a WebSocket upgrade" };
  }
  if (head.method !== "GET") {
    return { kind: "refuse", status: 400, reason: `a WebSocket handshake is a GET, not a ${head.method}` };
  }
  if (head.version < 11) return { kind: "refuse", status: 400, reason: "a WebSocket handshake needs HTTP/1.1" };
  if (!h.has("host")) return { kind: "refuse", status: 400, reason: "no Host header" };
  if (!hasToken(h.get("connection"), "upgrade")) {
    return { kind: "refuse", status: 400, reason: "the Connection header does not contain upgrade" };
  }
  const version = h.get("sec-websocket-version");
  if (version !== "13") {
    return {
      kind: "refuse",
      status: 426,
      reason: `WebSocket version ${version ?? "(none)"} is not supported; use 13`,
      extraHeaders: "Sec-WebSocket-Version: 13\r\n",
    };
  }
  const key = h.get("sec-websocket-key") ?? "";
  if (!KEY.test(key)) {
    return { kind: "refuse", status: 400, reason: "Sec-WebSocket-Key is not the base64 of 16 bytes" };
  }
  return { kind: "upgrade", head, key };
}

/** The Sec-WebSocket-Accept value for a client's key: base64 of SHA-1(key + the RFC 6455 GUID). */
export async function acceptKey(key: string): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-1", ascii.encode(key + GUID)));
  return btoa(String.fromCharCode(...digest));
}

/** The 101 response completing a handshake; no extension and no subprotocol are negotiated. */
export function switchingProtocols(accept: string): Uint8Array {
  return ascii.encode(
    `HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\n\r\n`,
  );
}

const STATUS_TEXT: Record<number, string> = {
  400: "Bad Request",
  426: "Upgrade Required",
  431: "Request Header Fields Too Large",
  503: "Service Unavailable",
};

/** A complete response that ends the connection: `status` with a plain-text body (left out for HEAD). */
export function refusal(status: number, body: string, extraHeaders = "", withBody = true): Uint8Array {
  const text = ascii.encode(body);
  const upgrade = status === 426 ? "Upgrade: websocket\r\n" : "";
  const head = ascii.encode(
    `HTTP/1.1 ${status} ${STATUS_TEXT[status] ?? "Error"}\r\n${upgrade}${extraHeaders}Connection: close\r\n` +
      `Content-Type: text/plain; charset=utf-8\r\nContent-Length: ${text.length}\r\n\r\n`,
  );
  if (!withBody) return head;
  const out = new Uint8Array(head.length + text.length);
  out.set(head);
  out.set(text, head.length);
  return out;
}
