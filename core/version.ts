/** The server's release version, reported by /api/health and in handshakes. */
export const VERSION = "0.1.0";

/**
 * The inter-process protocol version; peers with another version are refused at the handshake, naming both. Raise it
 * whenever a message's kind or fields change: a peer that checks every field would otherwise drop the newer one for
 * its first unknown field, again at every reconnect. 2: load balancing, base scripts, space settings, watch, metrics,
 * players. 3: batched client moves and client frames (clientMoves, toClients). 4: the accepting side proves the secret
 * too (a nonce in hello, a proof in welcome). 5: a space's navigation geometry (navGeometry in SpaceGeometry).
 */
export const PROTOCOL_VERSION = 5;
