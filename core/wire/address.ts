/** Listening addresses of processes: parsing, formatting, and telling two apart. */

/** Splits "HOST:PORT" (IPv6 as "[::1]:PORT"); throws with the text when malformed. */
export function parseAddress(text: string): { hostname: string; port: number } {
  const m = /^\[?([^\]]*?)\]?:(\d{1,5})$/.exec(text.trim());
  const port = m ? Number(m[2]) : NaN;
  if (!m || !m[1] || !(port >= 0 && port <= 65535)) {
    throw new Error(`"${text}" is not a HOST:PORT address`);
  }
  return { hostname: m[1], port };
}

/** Formats a host and port as HOST:PORT, bracketing IPv6. */
export function formatAddress(hostname: string, port: number): string {
  return hostname.includes(":") ? `[${hostname}]:${port}` : `${hostname}:${port}`;
}

function isWildcard(host: string): boolean {
  return host === "0.0.0.0" || host === "::";
}

/**
 * A process bound to every interface announces 0.0.0.0; others must reach it
 * on the address its connection came from (`remote`, HOST:PORT).
 */
export function reachableAddress(announced: string, remote: string): string {
  const m = /^(.*):(\d+)$/.exec(announced);
  if (!m) return announced;
  const host = m[1].replace(/^\[|\]$/g, "");
  if (!isWildcard(host)) return announced;
  const remoteHost = remote.replace(/:\d+$/, "").replace(/^\[|\]$/g, "");
  return formatAddress(remoteHost, Number(m[2]));
}

/** A client URL announced with a wildcard host, with the host the cellappmgr saw the process connect from. */
export function reachableUrl(announced: string, remote: string): string {
  const m = /^(wss?:\/\/)(\[[^\]]*\]|[^/:]*)(:\d+)?(\/.*)?$/.exec(announced);
  if (!m || !isWildcard(m[2].replace(/^\[|\]$/g, ""))) return announced;
  const port = m[3] ? Number(m[3].slice(1)) : (m[1] === "wss://" ? 443 : 80);
  return `${m[1]}${reachableAddress(formatAddress(m[2].replace(/^\[|\]$/g, ""), port), remote)}${m[4] ?? ""}`;
}

/**
 * Whether two announced addresses name the same listener: equal, or the same
 * port where one side announced a wildcard host.
 */
export function sameAddress(a: string, b: string): boolean {
  if (a === b) return true;
  try {
    const x = parseAddress(a), y = parseAddress(b);
    return x.port === y.port && (isWildcard(x.hostname) || isWildcard(y.hostname));
  } catch {
    return false;
  }
}
