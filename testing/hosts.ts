/**
 * Test hosts: each a Linux network namespace with its own address, linked by a veth pair to a bridge that lives in a
 * namespace of its own (nothing is added to the root namespace). A group picks a private /24, runs commands in a
 * host with `ip netns exec`, forwards loopback ports into a host (hosts_forward.ts), cuts and heals a host's link,
 * and blocks one host-to-host route. Everything it made is removed when it is disposed, on SIGINT/SIGTERM and at
 * unload; what a killed process left behind is removed by the next group made on this machine.
 *
 * Every namespace is named `sl<pid>x<n>` after the process that made it. `deno test --parallel` runs test files as
 * threads of one process, so `n` is claimed atomically (`ip netns add` fails on an existing name) rather than
 * counted, and a namespace is left behind only when its pid is gone. Interface names (at most 15 characters) reuse
 * the namespace's name.
 */
import { errorText } from "../core/errors.ts";
import { Forwards } from "./hosts_forward.ts";

/** Every name this helper makes starts with this, then the owning pid, then `x`. */
export const HOST_PREFIX = "sl";
const OWNED = new RegExp(`^${HOST_PREFIX}(\\d+)x\\d+`);

/** One test host: a namespace with one address on the group's bridge. */
export interface Host {
  /** The test's name for it ("mgr", "cell1", …), for messages. */
  readonly name: string;
  /** Its network namespace. */
  readonly ns: string;
  /** Its IPv4 address on the bridge. */
  readonly address: string;
  /** Its end of the veth pair, inside `ns`. */
  readonly link: string;
}

/** Where a main.ts process runs on a host: the command prefix and the flags that bind it there. */
export interface HostPlace {
  wrap: string[];
  flags: string[];
}

/** Runs `ip args`; throws with its stderr when it fails. */
export async function ip(args: string[]): Promise<string> {
  const out = await new Deno.Command("ip", { args, stdout: "piped", stderr: "piped" }).output();
  if (!out.success) {
    throw new Error(`ip ${args.join(" ")}: ${new TextDecoder().decode(out.stderr).trim()}`);
  }
  return new TextDecoder().decode(out.stdout);
}

function ipSync(args: string[]): void {
  try {
    new Deno.Command("ip", { args, stdout: "null", stderr: "null" }).outputSync();
  } catch {
    // Exit hooks do what they can.
  }
}

/** The names of the network namespaces on this machine. */
export async function namespaces(): Promise<string[]> {
  return (await ip(["netns", "list"])).split("\n").map((l) => l.split(" ")[0]).filter((n) => n !== "");
}

/** The names of the links in the root namespace. */
export async function rootLinks(): Promise<string[]> {
  return (await ip(["-o", "link", "show"])).split("\n").flatMap((l) => {
    const m = /^\d+:\s+([^:@\s]+)/.exec(l);
    return m ? [m[1]] : [];
  });
}

/** Why test hosts cannot be made here (not root, no `ip`, namespaces refused), or null when they can. */
export async function hostsUnavailable(): Promise<string | null> {
  if (Deno.build.os !== "linux") return "network namespaces need Linux";
  if (Deno.uid() !== 0) return "network namespaces need root";
  try {
    await ip(["-V"]);
  } catch (e) {
    return `no usable \`ip\` command (iproute2): ${errorText(e)}`;
  }
  try {
    const probe = await claimNamespace();
    await ip(["netns", "del", probe]);
  } catch (e) {
    return `cannot make a network namespace: ${errorText(e)}`;
  }
  return null;
}

/** Sweeps take this file's lock, so that a test can hold off every other test file's sweep meanwhile. */
const SWEEP_LOCK = `${Deno.env.get("TMPDIR") ?? "/tmp"}/seamless-test-hosts.lock`;

/**
 * Runs `fn` while no other sweep runs (in any process or thread); `fn` gets a sweep that does not take the lock
 * again.
 */
export async function underSweepLock<T>(fn: (sweep: () => Promise<string[]>) => Promise<T>): Promise<T> {
  using file = await Deno.open(SWEEP_LOCK, { create: true, write: true });
  await file.lock(true);
  return await fn(sweepUnlocked);
}

/**
 * Removes the namespaces and root-namespace links named after a process that is no longer running (left behind by
 * a killed test). Returns their names.
 */
export async function sweepLeftovers(): Promise<string[]> {
  return await underSweepLock((sweep) => sweep());
}

/** Whether a process `pid` runs, without signalling it (it may be someone else's by now). */
function running(pid: number): boolean {
  try {
    Deno.statSync(`/proc/${pid}`);
    return true;
  } catch {
    return false;
  }
}

async function sweepUnlocked(): Promise<string[]> {
  const dead = (name: string): boolean => {
    const m = OWNED.exec(name);
    return m !== null && !running(Number(m[1]));
  };
  const removed: string[] = [];
  for (const ns of (await namespaces()).filter(dead)) {
    // Another process's sweep may remove it first.
    if (await ip(["netns", "del", ns]).then(() => true, () => false)) removed.push(ns);
  }
  for (const link of (await rootLinks()).filter(dead)) {
    if (await ip(["link", "del", link]).then(() => true, () => false)) removed.push(link);
  }
  return removed;
}

async function claimNamespace(): Promise<string> {
  // Names must fit an interface (15 characters): 4 digits after the pid's at most.
  let n = 1 + Math.floor(Math.random() * 9000);
  for (let tries = 0; tries < 100; tries++, n = n % 9999 + 1) {
    const name = `${HOST_PREFIX}${Deno.pid}x${n}`;
    try {
      await ip(["netns", "add", name]);
      return name;
    } catch (e) {
      if (!/exists/i.test(errorText(e))) throw e;
    }
  }
  throw new Error(`no free namespace name ${HOST_PREFIX}${Deno.pid}x… after 100 tries`);
}

/** A private /24 (10.A.B.0) that the root namespace routes nowhere, as "10.A.B". */
async function pickRange(seed: number): Promise<string> {
  const routes = await ip(["-4", "-o", "route", "show", "table", "all"]);
  for (let i = 0; i < 4096; i++) {
    const v = (seed + i * 7919) % (128 * 256);
    const range = `10.${64 + (v >> 8)}.${v & 255}`;
    if (!routes.includes(`${range}.`)) return range;
  }
  throw new Error("no free private /24 in 10.64.0.0/9");
}

/** A group of test hosts on one bridge, removed when disposed. */
export class Hosts implements AsyncDisposable {
  /** Groups not yet removed, for the exit hooks. */
  static readonly #live = new Set<Hosts>();
  static #hooks: { signal: () => void; unload: () => void } | null = null;

  /** The hosts, in the order they were added. */
  readonly hosts: Host[] = [];
  /** The /24 the hosts' addresses come from ("10.A.B.0/24"). */
  readonly subnet: string;
  /** The namespace holding the bridge (the bridge device has the same name). */
  readonly bridge: string;
  readonly #range: string;
  readonly #forwards: Forwards<Host>;
  #removed = false;

  private constructor(bridge: string, range: string) {
    this.bridge = bridge;
    this.#range = range;
    this.subnet = `${range}.0/24`;
    this.#forwards = new Forwards<Host>((host, args) => this.spawn(host, args, { stdin: "piped", stdout: "piped" }));
  }

  /** Sweeps leftovers, makes the bridge and one host per name in `names`. */
  static async create(names: string[]): Promise<Hosts> {
    await sweepLeftovers();
    const bridge = await claimNamespace();
    let group: Hosts;
    try {
      group = new Hosts(bridge, await pickRange(Deno.pid * 31 + Number(bridge.split("x")[1])));
    } catch (e) {
      ipSync(["netns", "del", bridge]);
      throw e;
    }
    Hosts.#track(group);
    try {
      await ip(["-n", bridge, "link", "add", bridge, "type", "bridge"]);
      await ip(["-n", bridge, "link", "set", bridge, "up"]);
      for (const name of names) await group.add(name);
    } catch (e) {
      await group[Symbol.asyncDispose]();
      throw e;
    }
    return group;
  }

  /** Adds a host named `name` (for messages) with the next address. */
  async add(name: string): Promise<Host> {
    if (this.hosts.length >= 250) throw new Error(`host ${name}: a group holds at most 250 hosts`);
    const ns = await claimNamespace();
    const host: Host = { name, ns, address: `${this.#range}.${this.hosts.length + 2}`, link: ns };
    this.hosts.push(host);
    const port = `${ns}b`;
    // Both ends are made inside their namespaces: no link ever exists in the root namespace.
    await ip(["link", "add", "name", port, "netns", this.bridge, "type", "veth", "peer", "name", ns, "netns", ns]);
    await ip(["-n", this.bridge, "link", "set", port, "master", this.bridge]);
    await ip(["-n", this.bridge, "link", "set", port, "up"]);
    await ip(["-n", ns, "addr", "add", `${host.address}/24`, "dev", ns]);
    await ip(["-n", ns, "link", "set", ns, "up"]);
    await ip(["-n", ns, "link", "set", "lo", "up"]);
    return host;
  }

  /** The host named `name`. */
  get(name: string): Host {
    const h = this.hosts.find((h) => h.name === name);
    if (!h) throw new Error(`no test host "${name}" (have ${this.hosts.map((h) => h.name).join(", ")})`);
    return h;
  }

  /** The command prefix that runs a program inside `host`'s namespace (`ip netns exec` execs it: same pid). */
  wrap(host: Host): string[] {
    return ["ip", "netns", "exec", host.ns];
  }

  /** How a main.ts process runs on `host`: inside its namespace, bound to its address. */
  place(host: Host): HostPlace {
    return { wrap: this.wrap(host), flags: [`--host=${host.address}`] };
  }

  /** Starts `args` (program first) inside `host`'s namespace. */
  spawn(host: Host, args: string[], opts: Omit<Deno.CommandOptions, "args"> = {}): Deno.ChildProcess {
    const [cmd, ...rest] = this.wrap(host);
    return new Deno.Command(cmd, { ...opts, args: [...rest, ...args] }).spawn();
  }

  /**
   * A loopback address or URL whose connections reach `target` (HOST:PORT or a URL) from `from`'s address: the
   * test process lives in the root namespace and reaches the hosts only this way.
   */
  async forward(from: Host, target: string): Promise<string> {
    return await this.#forwards.open(from, target);
  }

  /** Takes `host`'s link down: nothing reaches it or leaves it. */
  async cut(host: Host): Promise<void> {
    await ip(["-n", host.ns, "link", "set", host.link, "down"]);
  }

  /** Brings `host`'s link back up. */
  async heal(host: Host): Promise<void> {
    await ip(["-n", host.ns, "link", "set", host.link, "up"]);
  }

  /** `from` routes nothing to `to` (a blackhole route in `from`'s namespace); `to` still sends to `from`. */
  async block(from: Host, to: Host): Promise<void> {
    await ip(["-n", from.ns, "route", "add", "blackhole", `${to.address}/32`]);
  }

  /** Removes the route `block(from, to)` added. */
  async unblock(from: Host, to: Host): Promise<void> {
    await ip(["-n", from.ns, "route", "del", "blackhole", `${to.address}/32`]);
  }

  /** Every namespace this group made (hosts and bridge). */
  get namespaces(): string[] {
    return [...this.hosts.map((h) => h.ns), this.bridge];
  }

  /** Ends the forwards and removes every namespace (their links go with them). */
  async [Symbol.asyncDispose](): Promise<void> {
    if (this.#removed) return;
    this.#removed = true;
    await this.#forwards.close();
    for (const ns of this.namespaces) await ip(["netns", "del", ns]).catch(() => {});
    Hosts.#untrack(this);
  }

  /** What the exit hooks do: the same, synchronously. */
  #removeSync(): void {
    if (this.#removed) return;
    this.#removed = true;
    this.#forwards.killSync();
    for (const ns of this.namespaces) ipSync(["netns", "del", ns]);
  }

  static #track(g: Hosts): void {
    Hosts.#live.add(g);
    if (Hosts.#hooks) return;
    const removeAll = () => {
      for (const h of Hosts.#live) h.#removeSync();
      Hosts.#live.clear();
    };
    const signal = () => {
      removeAll();
      Deno.exit(130);
    };
    Hosts.#hooks = { signal, unload: removeAll };
    Deno.addSignalListener("SIGINT", signal);
    Deno.addSignalListener("SIGTERM", signal);
    globalThis.addEventListener("unload", removeAll);
  }

  static #untrack(g: Hosts): void {
    Hosts.#live.delete(g);
    const hooks = Hosts.#hooks;
    if (Hosts.#live.size > 0 || !hooks) return;
    // No signal listener outlives the groups: a test's op sanitizer would see it.
    Deno.removeSignalListener("SIGINT", hooks.signal);
    Deno.removeSignalListener("SIGTERM", hooks.signal);
    globalThis.removeEventListener("unload", hooks.unload);
    Hosts.#hooks = null;
  }
}
