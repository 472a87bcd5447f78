/**
 * Parsers for the kinds of value flags, variables and config-file keys hold: each takes the raw text (or JSON value)
 * and returns the value, or throws an Error whose message says what was expected.
 */

/** A non-empty string. */
export const text = (v: unknown): string => {
  if (typeof v !== "string" || v === "") {
    throw new Error(`expected a non-empty string, got ${JSON.stringify(v)}`);
  }
  return v;
};

/** An integer in [min, max]; `what` names it in the error ("a port number"). */
export const integer = (min: number, max: number, what: string) => (v: unknown): number => {
  const n = typeof v === "number" ? v : typeof v === "string" && /^\d+$/.test(v.trim()) ? Number(v) : NaN;
  if (!Number.isInteger(n) || n < min || n > max) {
    throw new Error(`${JSON.stringify(v)} is not ${what} (${min}-${max})`);
  }
  return n;
};

/** A number (decimals allowed) in [min, max]; `what` names it in the error ("a load in cores"). */
export const decimal = (min: number, max: number, what: string) => (v: unknown): number => {
  const n = typeof v === "number" ? v : typeof v === "string" && /^\d+(\.\d+)?$/.test(v.trim()) ? Number(v) : NaN;
  if (!Number.isFinite(n) || n < min || n > max) {
    throw new Error(`${JSON.stringify(v)} is not ${what} (${min}-${max})`);
  }
  return n;
};

/** A comma-separated list (or JSON array) of names without spaces. */
export const list = (v: unknown): string[] => {
  const items = Array.isArray(v) ? v : String(v).split(",");
  const out = items.map((i) => String(i).trim()).filter((i) => i !== "");
  if (out.some((i) => /\s/.test(i))) throw new Error(`${JSON.stringify(v)} is not a comma-separated list of names`);
  return out;
};

/** "true" or "false", in any case. */
export const bool = (v: unknown): boolean => {
  const t = String(v).trim().toLowerCase();
  if (t !== "true" && t !== "false") throw new Error(`${JSON.stringify(v)} is not true or false`);
  return t === "true";
};

/** A comma-separated list of http(s) origins; trailing slashes are dropped. */
export const origin = (v: unknown): string[] => {
  const out = list(v);
  for (const o of out) {
    let u: URL | null = null;
    try {
      u = new URL(o);
    } catch {
      // reported below
    }
    if (!u || (u.protocol !== "http:" && u.protocol !== "https:") || u.origin !== o.replace(/\/$/, "")) {
      throw new Error(`${JSON.stringify(o)} is not an origin like https://ops.example.com or http://127.0.0.1:3000`);
    }
  }
  return out.map((o) => o.replace(/\/$/, ""));
};

/** A ws:// or wss:// URL clients connect to, as a proxy in front of the baseapp serves it. */
export const clientUrl = (v: unknown): string => {
  let u: URL | null = null;
  try {
    u = new URL(text(v).trim());
  } catch {
    // reported below
  }
  if (!u || (u.protocol !== "ws:" && u.protocol !== "wss:") || u.username || u.password || u.search || u.hash) {
    throw new Error(`${JSON.stringify(v)} is not a WebSocket URL like wss://play.example.com/ (ws:// or wss://)`);
  }
  return u.href;
};

/** A host name or address clients can reach: no scheme, no port, no wildcard. */
export const hostName = (v: unknown): string => {
  const t = text(v).trim();
  const ok = /^[A-Za-z0-9]([A-Za-z0-9.-]{0,252})$/.test(t) || /^\[?[0-9A-Fa-f:.]+\]?$/.test(t) && t.includes(":");
  if (!ok || t === "0.0.0.0" || t.replace(/^\[|\]$/g, "") === "::") {
    throw new Error(`${JSON.stringify(v)} is not a host name or address clients can reach (no scheme, no port)`);
  }
  return t.replace(/^\[|\]$/g, "");
};

/**
 * A PostgreSQL connection URL: postgres:// or postgresql://, a host, optionally a port and a database. The error does
 * not repeat the value (it may hold a password).
 */
export const postgresUrl = (v: unknown): string => {
  const t = text(v).trim();
  let u: URL | null = null;
  try {
    u = new URL(t);
  } catch {
    // reported below
  }
  if (!u || (u.protocol !== "postgres:" && u.protocol !== "postgresql:") || u.hostname === "") {
    throw new Error("not a PostgreSQL URL like postgres://USER:PASSWORD@HOST:5432/DATABASE");
  }
  return t;
};
