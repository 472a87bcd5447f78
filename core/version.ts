/** The server's release version, reported by /api/health and in handshakes. */
export const VERSION = "0.1.0";

/** The inter-process protocol version; peers with another version are refused. */
export const PROTOCOL_VERSION = 1;
