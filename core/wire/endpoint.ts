import { Channel, type ChannelOptions } from "./channel.ts";
import { type Logger, silentLogger } from "../log.ts";

/** Options of a listening endpoint: the channel options plus where to listen. */
export interface ListenOptions extends ChannelOptions {
  host: string;
  /** 0 picks a free port. */
  port: number;
  /** Called with each channel whose handshake succeeded. */
  onChannel?: (ch: Channel) => void;
}

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

/** A TCP listener whose accepted connections become channels after the handshake. */
export class WireServer {
  readonly address: string;
  readonly channels: Set<Channel> = new Set();
  #listener: Deno.TcpListener;
  #log: Logger;

  constructor(opts: ListenOptions) {
    this.#listener = Deno.listen({ hostname: opts.host, port: opts.port });
    const a = this.#listener.addr;
    this.address = formatAddress(a.hostname, a.port);
    this.#log = opts.log ?? silentLogger;
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
        const ch = Channel.accept(conn, opts);
        this.channels.add(ch);
        ch.closed.then(() => this.channels.delete(ch));
        ch.ready.then(() => onChannel?.(ch), () => {});
      }
    } catch (e) {
      if (!(e instanceof Deno.errors.BadResource)) {
        this.#log.error(`accept failed: ${(e as Error).message}`);
      }
    }
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

/** Connects to `address` and completes the handshake; rejects with the reason it failed. */
export async function dial(
  address: string,
  opts: ChannelOptions,
): Promise<Channel> {
  const { hostname, port } = parseAddress(address);
  const conn = await Deno.connect({ hostname, port });
  const ch = Channel.connect(conn, opts);
  await ch.ready;
  return ch;
}
