import { errorText } from "../errors.ts";
import { Channel, type ChannelOptions, type WireTls } from "./channel.ts";
import { formatAddress, parseAddress } from "./address.ts";
import { type Logger, silentLogger, Throttle } from "../log.ts";
import type { SecureContext } from "node:tls";
import { acceptTls, type ByteConn, serverContext } from "../tls/mod.ts";

/** Options of a listening endpoint: the channel options plus where to listen. */
export interface ListenOptions extends ChannelOptions {
  host: string;
  /** 0 picks a free port. */
  port: number;
  /** Called with each channel whose handshake succeeded. */
  onChannel?: (ch: Channel) => void;
  /** Connections still in their handshake beyond which a new one is closed at once (default 256). */
  maxPending?: number;
  /** Open connections beyond which a new one is closed at once (default 4096). */
  maxConnections?: number;
}

export { formatAddress, parseAddress, reachableAddress, reachableUrl, sameAddress } from "./address.ts";

/**
 * A TCP listener (TLS with `opts.tls`) whose accepted connections become channels after the handshake. A TLS
 * handshake that fails (a peer whose certificate or CA is not this cluster's) is logged and nothing of it is read.
 */
export class WireServer {
  readonly address: string;
  readonly channels: Set<Channel> = new Set();
  /** Connections closed at once because of the caps, for tests and logs. */
  refused = 0;
  #pending = 0;
  #maxPending: number;
  #maxConnections: number;
  #listener: Deno.TcpListener;
  #tls: SecureContext | null;
  #log: Logger;
  #handshakeMs: number;
  /** TLS handshakes that failed, per peer host and reason: logged at most once a minute for each. */
  #tlsFailures = new Throttle(60_000);

  constructor(opts: ListenOptions) {
    this.#tls = opts.tls ? serverContext(opts.tls) : null;
    this.#listener = Deno.listen({ hostname: opts.host, port: opts.port });
    this.#handshakeMs = opts.handshakeTimeoutMs ?? 5000;
    const a = this.#listener.addr;
    this.address = formatAddress(a.hostname, a.port);
    this.#log = opts.log ?? silentLogger;
    this.#maxPending = opts.maxPending ?? 256;
    this.#maxConnections = opts.maxConnections ?? 4096;
    const chOpts: ChannelOptions = {
      ...opts,
      address: opts.address ?? this.address,
    };
    this.#accept(chOpts, opts.onChannel);
  }

  /** The port actually bound. */
  get port(): number {
    return this.#listener.addr.port;
  }

  async #accept(
    opts: ChannelOptions,
    onChannel?: (ch: Channel) => void,
  ): Promise<void> {
    try {
      for await (const conn of this.#listener) {
        if (this.#pending >= this.#maxPending || this.channels.size >= this.#maxConnections) {
          // A flood of half-open connections must not starve the members' own.
          if (this.refused++ % 1000 === 0) {
            this.#log.warn(
              `refusing connections: ${this.#pending} in their handshake, ${this.channels.size} open ` +
                `(${this.refused} refused so far)`,
            );
          }
          conn.close();
          continue;
        }
        if (this.#tls) void this.#admitTls(conn, this.#tls, opts, onChannel);
        else this.#admit(conn, opts, onChannel);
      }
    } catch (e) {
      if (!(e instanceof Deno.errors.BadResource)) {
        this.#log.error(`accept failed: ${errorText(e)}`);
      }
    }
  }

  /** Completes the TLS handshake within the channel handshake's time, counted as pending; then admits the channel. */
  async #admitTls(
    conn: Deno.TcpConn,
    context: SecureContext,
    opts: ChannelOptions,
    onChannel?: (ch: Channel) => void,
  ): Promise<void> {
    this.#pending++;
    conn.setNoDelay(true);
    let timer: ReturnType<typeof setTimeout> | undefined;
    let tls: ByteConn;
    try {
      tls = await Promise.race([
        acceptTls(conn, context),
        new Promise<never>((_, reject) => {
          timer = setTimeout(
            () => reject(new Error(`no TLS handshake within ${this.#handshakeMs} ms`)),
            this.#handshakeMs,
          );
        }),
      ]);
    } catch (e) {
      const { hostname, port } = conn.remoteAddr;
      const why = errorText(e);
      const held = this.#tlsFailures.take(`${hostname} ${why}`);
      if (held !== null) {
        this.#log.warn(
          `refusing peer ${formatAddress(hostname, port)}: TLS handshake failed: ${why}${Throttle.note(held)}`,
        );
      }
      // Closing the TCP connection ends the TLS one over it, mid-handshake too (core/tls).
      try {
        conn.close();
      } catch {
        // already closed
      }
      return;
    } finally {
      clearTimeout(timer);
      this.#pending--;
    }
    this.#admit(tls, opts, onChannel);
  }

  #admit(conn: ByteConn, opts: ChannelOptions, onChannel?: (ch: Channel) => void): void {
    const ch = Channel.accept(conn, opts);
    this.channels.add(ch);
    this.#pending++;
    let counted = true;
    const settled = () => {
      if (counted) this.#pending--;
      counted = false;
    };
    ch.closed.then(() => {
      settled();
      this.channels.delete(ch);
    });
    ch.ready.then(() => {
      settled();
      onChannel?.(ch);
    }, () => {});
  }

  /** Stops listening and closes every channel with `reason`. */
  close(reason = "server stopping"): void {
    try {
      this.#listener.close();
    } catch {
      // Already closed.
    }
    for (const ch of this.channels) ch.close(reason);
  }
}

/**
 * Connects to `address` and completes the handshake; rejects with the reason it failed. With `opts.tls` the
 * connection is TLS and the peer's certificate must chain to `opts.tls.ca` and name the host dialled.
 */
export async function dial(
  address: string,
  opts: ChannelOptions,
): Promise<Channel> {
  const { hostname, port } = parseAddress(address);
  const conn = opts.tls
    ? await dialTls(address, hostname, port, opts.tls, opts.handshakeTimeoutMs ?? 5000)
    : await Deno.connect({ hostname, port });
  if (reachedItself(conn)) {
    conn.close();
    throw new Error(`${address}: the connection reached itself (nothing listens there)`);
  }
  const ch = Channel.connect(conn, { dialed: address, ...opts });
  await ch.ready;
  return ch;
}

/**
 * Whether a connection is to its own socket. A dial from a local port to a local address where nothing listens may
 * get, as its source port, the very port it dials: TCP's simultaneous open then connects the socket to itself (seen
 * about once in a few thousand dials to the same free port). Nobody would ever answer its handshake.
 */
export function reachedItself(conn: { localAddr: Deno.Addr; remoteAddr: Deno.Addr }): boolean {
  const l = conn.localAddr as Deno.NetAddr, r = conn.remoteAddr as Deno.NetAddr;
  return l.port === r.port && l.hostname === r.hostname;
}

async function dialTls(
  address: string,
  hostname: string,
  port: number,
  tls: WireTls,
  ms: number,
): Promise<Deno.TlsConn> {
  const conn = await Deno.connectTls({ hostname, port, caCerts: [tls.ca] });
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    await Promise.race([
      conn.handshake(),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
      }),
    ]);
    return conn;
  } catch (e) {
    try {
      conn.close();
    } catch {
      // already closed
    }
    throw new Error(`TLS handshake with ${address} failed: ${errorText(e)}`, { cause: e });
  } finally {
    clearTimeout(timer);
  }
}
