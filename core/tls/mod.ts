/** Server-side TLS on connections accepted with Deno.listen, read like a Deno.Conn (see accept.ts for why). */
export { acceptTls, serverContext, type TlsKeyPair } from "./accept.ts";
export { type ByteConn, NodeTlsConn } from "./conn.ts";
