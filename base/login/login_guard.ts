/**
 * The login guard, consulted before a login costs anything (a KV read, a
 * password hash): per client address a token bucket of attempts and a
 * back-off that doubles with each failure past a free allowance; per account
 * a back-off of the same kind that a successful login resets. A refusal says
 * what to wait for. Failures leak away with time; what the guard remembers is
 * bounded (idle entries are swept, and past `maxEntries` the least recently
 * seen are forgotten, those without failures first).
 */

/** The numbers of login rate limiting; every field has a default (DEFAULT_LOGIN_LIMITS). */
export interface LoginLimits {
  /** Attempts an address may make in a burst. */
  addressBurst: number;
  /** Attempts per second an address gets back after a burst. */
  addressRefillPerSec: number;
  /** Failed logins from an address before its back-off starts. */
  addressFreeFailures: number;
  /** The first back-off of an address, doubled with each further failure. */
  addressBaseDelayMs: number;
  /** The longest back-off of an address. */
  addressMaxDelayMs: number;
  /** An address's failures leak away, one per this many ms. */
  addressFailureLeakMs: number;
  /** Failed logins of an account before its back-off starts. */
  accountFreeFailures: number;
  /** The first back-off of an account, doubled with each further failure. */
  accountBaseDelayMs: number;
  /** The longest back-off of an account. */
  accountMaxDelayMs: number;
  /** An account's failures leak away, one per this many ms (a successful login forgets them all). */
  accountFailureLeakMs: number;
  /** Addresses remembered at most, and accounts remembered at most. */
  maxEntries: number;
  /** How often entries that no longer hold anything back are dropped. */
  sweepEveryMs: number;
  /** Password hashes running at once. */
  hashConcurrency: number;
  /** Password hashes waiting at most; beyond that a login is refused as busy. */
  hashQueueMax: number;
}

/** Login limits unless configured. */
export const DEFAULT_LOGIN_LIMITS: LoginLimits = {
  addressBurst: 20,
  addressRefillPerSec: 5,
  addressFreeFailures: 10,
  addressBaseDelayMs: 1000,
  addressMaxDelayMs: 60_000,
  addressFailureLeakMs: 60_000,
  accountFreeFailures: 3,
  accountBaseDelayMs: 1000,
  accountMaxDelayMs: 5 * 60_000,
  accountFailureLeakMs: 10 * 60_000,
  maxEntries: 10_000,
  sweepEveryMs: 60_000,
  hashConcurrency: 1,
  hashQueueMax: 16,
};

/** How a guarded login ended, as far as the guard cares. */
export type LoginOutcome =
  /** The password matched (or the account was created). */
  | "ok"
  /** The account exists and the password did not match. */
  | "wrong-password"
  /** No such account (and none is created on login). */
  | "no-account"
  /** Refused for another reason (busy, a custom check): no failure counted. */
  | "other";

/** An admitted attempt; hand it back to `settle` exactly once. */
export interface LoginTicket {
  /** The address key the attempt was counted under. */
  readonly address: string;
  readonly account: string;
  /** The address or the account failed recently: its hash waits behind others. */
  readonly suspect: boolean;
}

/** The guard's answer: go on with a ticket, or a refusal saying how long to wait. */
export type Admission =
  | { ok: true; ticket: LoginTicket }
  | { ok: false; reason: string; retryAfterMs: number };

/** How much the guard remembers and has done. */
export interface GuardStats {
  addresses: number;
  accounts: number;
  admitted: number;
  refused: number;
  /** Entries forgotten because the table was full. */
  evicted: number;
}

interface Entry {
  /** Failures not yet leaked away (as of `leakedAt`). */
  failures: number;
  leakedAt: number;
  lastFailureAt: number;
  /** Admitted attempts not yet settled. */
  pending: number;
  /** Token bucket (addresses only). */
  tokens: number;
  refilledAt: number;
}

class Ticket implements LoginTicket {
  settled = false;
  constructor(
    readonly address: string,
    readonly account: string,
    readonly suspect: boolean,
    readonly addr: Entry,
    readonly acct: Entry,
  ) {}
}

/** Per-address and per-account login rate limits and back-off, checked before any hashing. */
export class LoginGuard {
  readonly #o: LoginLimits;
  readonly #now: () => number;
  readonly #addresses = new Map<string, Entry>();
  readonly #accounts = new Map<string, Entry>();
  #sweptAt: number;
  #admitted = 0;
  #refused = 0;
  #evicted = 0;

  /** `now` is a monotonic clock in ms (tests inject one). */
  constructor(limits: Partial<LoginLimits> = {}, now: () => number = () => performance.now()) {
    this.#o = checkLimits({ ...DEFAULT_LOGIN_LIMITS, ...limits });
    this.#now = now;
    this.#sweptAt = now();
  }

  /** Entry counts and counters. */
  get stats(): GuardStats {
    return {
      addresses: this.#addresses.size,
      accounts: this.#accounts.size,
      admitted: this.#admitted,
      refused: this.#refused,
      evicted: this.#evicted,
    };
  }

  /**
   * Decides whether a login attempt of `account` from `remote` (HOST:PORT, or a bare host) may go on. Admission
   * takes one token from the address's bucket; a refusal takes nothing and counts as no failure.
   */
  admit(remote: string, account: string): Admission {
    const now = this.#now();
    if (now - this.#sweptAt >= this.#o.sweepEveryMs) this.sweep();
    const o = this.#o;
    const address = addressKey(remote);
    const addr = this.#entry(this.#addresses, address, now, true)!;
    const acct = this.#entry(this.#accounts, account, now, false);

    const addrWait = backoff(addr, o.addressFreeFailures, o.addressBaseDelayMs, o.addressMaxDelayMs, now);
    if (addrWait > 0) return this.#refuse(`too many failed logins from your address; try again in`, addrWait);
    if (acct) {
      const acctWait = backoff(acct, o.accountFreeFailures, o.accountBaseDelayMs, o.accountMaxDelayMs, now);
      if (acctWait > 0) return this.#refuse(`too many failed logins for this account; try again in`, acctWait);
      // Attempts in flight count as failures-to-be, so a burst cannot get more guesses than the back-off allows.
      if (acct.pending > 0 && acct.failures + acct.pending >= o.accountFreeFailures) {
        return this.#refuse(`another login for this account is being checked; try again in`, o.accountBaseDelayMs);
      }
    }
    refill(addr, o.addressBurst, o.addressRefillPerSec, now);
    if (addr.tokens < 1) {
      const wait = ((1 - addr.tokens) / o.addressRefillPerSec) * 1000;
      return this.#refuse(`too many login attempts from your address; try again in`, wait);
    }
    addr.tokens -= 1;
    const held = acct ?? this.#entry(this.#accounts, account, now, true)!;
    addr.pending++;
    held.pending++;
    this.#admitted++;
    const suspect = addr.failures > 0 || held.failures > 0;
    return { ok: true, ticket: new Ticket(address, account, suspect, addr, held) };
  }

  /** Records how an admitted attempt ended. */
  settle(ticket: LoginTicket, outcome: LoginOutcome): void {
    if (!(ticket instanceof Ticket)) throw new Error("settle: not a ticket of this guard");
    if (ticket.settled) return;
    ticket.settled = true;
    const now = this.#now();
    const { addr, acct } = ticket;
    addr.pending--;
    acct.pending--;
    if (outcome === "ok") {
      // Only the account is forgiven: forgiving the address would let anyone holding one account of their own clear
      // their address's back-off between guesses at others.
      acct.failures = 0;
      acct.lastFailureAt = 0;
    } else if (outcome === "wrong-password") {
      fail(addr, this.#o.addressFailureLeakMs, now);
      fail(acct, this.#o.accountFailureLeakMs, now);
    } else if (outcome === "no-account") {
      fail(addr, this.#o.addressFailureLeakMs, now);
    }
  }

  /** Drops entries that hold nothing back any more (run every `sweepEveryMs` from `admit`). */
  sweep(): void {
    const now = this.#now();
    this.#sweptAt = now;
    for (const [k, e] of this.#addresses) {
      leak(e, this.#o.addressFailureLeakMs, now);
      refill(e, this.#o.addressBurst, this.#o.addressRefillPerSec, now);
      if (e.pending === 0 && e.failures === 0 && e.tokens >= this.#o.addressBurst) this.#addresses.delete(k);
    }
    for (const [k, e] of this.#accounts) {
      leak(e, this.#o.accountFailureLeakMs, now);
      if (e.pending === 0 && e.failures === 0) this.#accounts.delete(k);
    }
  }

  #refuse(what: string, waitMs: number): Admission {
    this.#refused++;
    return { ok: false, reason: `${what} ${formatWait(waitMs)}`, retryAfterMs: Math.ceil(waitMs) };
  }

  /** The entry of `key`, moved to the most recently seen end; created when `create`, forgetting one if full. */
  #entry(map: Map<string, Entry>, key: string, now: number, create: boolean): Entry | null {
    const isAddress = map === this.#addresses;
    const leakMs = isAddress ? this.#o.addressFailureLeakMs : this.#o.accountFailureLeakMs;
    let e = map.get(key);
    if (e) {
      map.delete(key);
      map.set(key, e);
      leak(e, leakMs, now);
      return e;
    }
    if (!create) return null;
    if (map.size >= this.#o.maxEntries) this.#forgetOne(map);
    e = { failures: 0, leakedAt: now, lastFailureAt: 0, pending: 0, tokens: this.#o.addressBurst, refilledAt: now };
    map.set(key, e);
    return e;
  }

  /**
   * Forgets one of the least recently seen entries: the first among the oldest few with no failures and nothing in
   * flight, else the oldest. Looking at only a few keeps this O(1); forgetting failures last makes it costly to
   * wash an account's back-off out by flooding other names.
   */
  #forgetOne(map: Map<string, Entry>): void {
    let oldest: string | undefined;
    let n = 0;
    for (const [k, e] of map) {
      oldest ??= k;
      if (e.failures === 0 && e.pending === 0) {
        map.delete(k);
        this.#evicted++;
        return;
      }
      if (++n >= 16) break;
    }
    if (oldest !== undefined) {
      map.delete(oldest);
      this.#evicted++;
    }
  }
}

/** Throws naming the first field that would make the guard divide by zero or never let anyone in. */
function checkLimits(l: LoginLimits): LoginLimits {
  const positive = ["addressRefillPerSec", "addressFailureLeakMs", "accountFailureLeakMs", "sweepEveryMs"] as const;
  const atLeastOne = ["addressBurst", "maxEntries", "hashConcurrency"] as const;
  for (const [k, v] of Object.entries(l)) {
    if (typeof v !== "number" || !(v >= 0)) throw new Error(`loginLimits.${k} must be a number of 0 or more, not ${v}`);
  }
  for (const k of positive) if (!(l[k] > 0)) throw new Error(`loginLimits.${k} must be more than 0`);
  for (const k of atLeastOne) if (!(l[k] >= 1)) throw new Error(`loginLimits.${k} must be at least 1`);
  return l;
}

/** How long an entry must still wait after its last failure, 0 when it need not. */
function backoff(e: Entry, free: number, baseMs: number, maxMs: number, now: number): number {
  if (e.failures < free) return 0;
  const delay = Math.min(maxMs, baseMs * 2 ** Math.min(e.failures - free, 40));
  return Math.max(0, e.lastFailureAt + delay - now);
}

function fail(e: Entry, leakMs: number, now: number): void {
  leak(e, leakMs, now);
  if (e.failures === 0) e.leakedAt = now;
  e.failures++;
  e.lastFailureAt = now;
}

/** Lets whole failures leak away since `leakedAt`. */
function leak(e: Entry, leakMs: number, now: number): void {
  if (e.failures === 0) {
    e.leakedAt = now;
    return;
  }
  const gone = Math.floor((now - e.leakedAt) / leakMs);
  if (gone <= 0) return;
  e.failures = Math.max(0, e.failures - gone);
  e.leakedAt += gone * leakMs;
}

function refill(e: Entry, burst: number, perSec: number, now: number): void {
  e.tokens = Math.min(burst, e.tokens + ((now - e.refilledAt) * perSec) / 1000);
  e.refilledAt = now;
}

/** A wait as people read it: "0.4 s", "8 s", "45 s", "5 min". */
export function formatWait(ms: number): string {
  const s = Math.max(0, ms) / 1000;
  if (s < 10) return `${Math.max(0.1, Math.ceil(s * 10) / 10)} s`;
  if (s < 120) return `${Math.ceil(s)} s`;
  return `${Math.ceil(s / 60)} min`;
}

/**
 * The key an address is limited under: the host part of HOST:PORT, an IPv4-mapped IPv6 address as IPv4, and an IPv6
 * address by its /64 (one subscriber commonly holds a whole /64, so single addresses would be free to rotate).
 */
export function addressKey(remote: string): string {
  let host = remote;
  if (host.startsWith("[")) {
    const end = host.indexOf("]");
    host = host.slice(1, end > 0 ? end : undefined);
  } else if (host.includes(":") && host.indexOf(":") === host.lastIndexOf(":")) {
    host = host.slice(0, host.indexOf(":"));
  }
  host = host.toLowerCase();
  if (!host.includes(":")) return host;
  const zone = host.indexOf("%");
  if (zone >= 0) host = host.slice(0, zone);
  const v4 = /(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(host);
  if (v4) {
    const [a, b, c, d] = v4.slice(1).map(Number);
    const groups = expandIpv6(
      `${host.slice(0, v4.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`,
    );
    const mapped = groups && groups.slice(0, 5).every((g) => g === "0") && groups[5] === "ffff";
    return mapped ? `${a}.${b}.${c}.${d}` : host;
  }
  const groups = expandIpv6(host);
  return groups ? `${groups.slice(0, 4).join(":")}::/64` : host;
}

/** The eight hextets of an IPv6 address, without leading zeros, or null. */
function expandIpv6(host: string): string[] | null {
  const halves = host.split("::");
  if (halves.length > 2) return null;
  const head = halves[0] ? halves[0].split(":") : [];
  const tail = halves.length === 2 && halves[1] ? halves[1].split(":") : [];
  const missing = 8 - head.length - tail.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return null;
  const all = [...head, ...Array<string>(halves.length === 2 ? missing : 0).fill("0"), ...tail];
  if (!all.every((g) => /^[0-9a-f]{1,4}$/.test(g))) return null;
  return all.map((g) => g.replace(/^0+(?=.)/, ""));
}
