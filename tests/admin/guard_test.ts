/** The admin app's request guards in process, over a stand-in backend: their order and every case of them. */
import assert from "node:assert/strict";
import { type AdminBackend, type AdminOptions, createAdminApp } from "../../admin/mod.ts";
import { RequestError } from "../../core/views.ts";

function fakeBackend(): AdminBackend & { shutdowns: number } {
  const b = {
    shutdowns: 0,
    health: () => ({ ok: true as const, role: "cellappmgr" as const, version: "test" }),
    cluster: () => ({ processes: [] }),
    shutdownCluster: () => {
      b.shutdowns++;
      return { stopping: true as const, processes: 0 };
    },
    listSpaces: () => [],
    getSpace: (): never => {
      throw new RequestError("not_found", "no such space");
    },
    createSpace: () => Promise.resolve({ id: 2 }),
    patchSpace: (): never => {
      throw new RequestError("not_found", "no such space");
    },
    spawnInto: () => Promise.resolve({ spawned: 1 }),
    retireCellApp: (id: number) => ({ id, retiring: true as const, cells: 0 }),
    deleteSpace: (id: number) => ({ id, shuttingDown: true as const }),
    getCellApp: (): never => {
      throw new RequestError("not_found", "no such cellapp");
    },
    getCell: () => Promise.resolve([]),
    findEntity: (): never => {
      throw new RequestError("not_found", "no such entity");
    },
    inspectEntity: (): never => {
      throw new RequestError("not_found", "no such entity");
    },
    onProcessChange: () => () => {},
    shutdownProcess: (): never => {
      throw new RequestError("not_found", "no such process");
    },
    players: () => Promise.resolve({ players: [], total: 0, truncated: false, unanswered: [] }),
    kickPlayer: (): never => {
      throw new RequestError("not_found", "no such player");
    },
  };
  return b;
}

type ErrorBody = { error: { code: string; message: string } };

function appWith(opts: AdminOptions = {}) {
  const backend = fakeBackend();
  const app = createAdminApp(backend, opts);
  const send = async (
    path: string,
    init: RequestInit & { host?: string | null } = {},
  ): Promise<{ status: number; body: unknown; headers: Headers }> => {
    const headers = new Headers(init.headers);
    const host = init.host === undefined ? "127.0.0.1:8080" : init.host;
    if (host !== null) headers.set("host", host);
    const res = await app.request(`http://127.0.0.1:8080${path}`, { ...init, headers });
    const text = await res.text();
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      // not JSON
    }
    return { status: res.status, body, headers: res.headers };
  };
  return { backend, send };
}

const code = (body: unknown): string => (body as ErrorBody).error?.code;
const json = { "content-type": "application/json" };

Deno.test("Host: loopback names, the bound address and --admin-hosts, any port; nothing else", async () => {
  const { send } = appWith({ boundHost: "127.0.0.1", hosts: ["ops.internal", "10.1.2.3", "fd00::7"] });
  for (
    const host of [
      "localhost",
      "localhost:1",
      "LocalHost:8080",
      "127.0.0.1",
      "127.0.0.1:65535",
      "[::1]:8080",
      "[::1]",
      "ops.internal:9000",
      "OPS.internal",
      "10.1.2.3:8080",
      "[fd00::7]:8080",
    ]
  ) {
    assert.equal((await send("/api/health", { host })).status, 200, host);
  }
  for (
    const host of [
      "evil.example",
      "evil.example:8080",
      "localhost.evil.example",
      "127.0.0.2:8080",
      "ops.internal.evil.example",
      "10.1.2.4",
      "0.0.0.0:8080",
    ]
  ) {
    const r = await send("/api/health", { host });
    assert.equal(r.status, 403, host);
    assert.equal(code(r.body), "forbidden_host", host);
    assert.match((r.body as ErrorBody).error.message, /--admin-hosts=/, host);
  }
  for (const host of ["", "a b", "evil.example/x", "user@127.0.0.1", "[::1"]) {
    const r = await send("/api/health", { host });
    assert.equal(r.status, 400, JSON.stringify(host));
    assert.equal(code(r.body), "bad_request");
  }
  const none = await send("/api/health", { host: null });
  assert.equal(none.status, 400);
  assert.match((none.body as ErrorBody).error.message, /no Host header/);
});

Deno.test("Host: bound to a wildcard, the machine's own addresses are accepted too", async () => {
  const interfaces = () => ["127.0.0.1", "192.168.7.20", "fe80::1%eth0", "2001:db8::5"];
  for (const boundHost of ["0.0.0.0", "::"]) {
    const { send } = appWith({ boundHost, interfaces });
    for (const host of ["192.168.7.20:8080", "[fe80::1]:8080", "[2001:db8::5]", "localhost:8080"]) {
      assert.equal((await send("/api/health", { host })).status, 200, `${boundHost} ${host}`);
    }
    assert.equal((await send("/api/health", { host: "192.168.7.21:8080" })).status, 403, boundHost);
    assert.equal((await send("/api/health", { host: "evil.example:8080" })).status, 403, boundHost);
  }
  // Not bound to a wildcard: interface addresses are not names of this API.
  const { send } = appWith({ boundHost: "127.0.0.1", interfaces });
  assert.equal((await send("/api/health", { host: "192.168.7.20:8080" })).status, 403);
  // The real interfaces of this machine: at least its loopback address.
  const real = appWith({ boundHost: "0.0.0.0" });
  assert.equal((await real.send("/api/health", { host: "127.0.0.1:1" })).status, 200);
});

Deno.test("mutating requests need Content-Type: application/json, empty bodies included", async () => {
  const { backend, send } = appWith();
  for (const method of ["POST", "PUT", "PATCH", "DELETE"]) {
    for (const type of [null, "text/plain", "application/x-www-form-urlencoded", "application/json-patch+json"]) {
      const headers: Record<string, string> = type === null ? {} : { "content-type": type };
      const r = await send("/api/shutdown", { method, headers });
      assert.equal(r.status, 415, `${method} ${type}`);
      assert.equal(code(r.body), "unsupported_media_type");
      assert.match((r.body as ErrorBody).error.message, /Content-Type: application\/json/);
    }
  }
  assert.equal(backend.shutdowns, 0);
  for (const type of ["application/json", "Application/JSON; charset=utf-8"]) {
    assert.equal((await send("/api/shutdown", { method: "POST", headers: { "content-type": type } })).status, 202);
  }
  assert.equal(backend.shutdowns, 2);
  assert.equal((await send("/api/spaces/2", { method: "DELETE", headers: json })).status, 202);
  assert.equal((await send("/api/spaces", { method: "POST", headers: json, body: "{nope" })).status, 400);
  // Reads need no Content-Type.
  assert.equal((await send("/api/health")).status, 200);
});

Deno.test("bodies over 1 MiB are refused, chunked or not", async () => {
  const { send } = appWith();
  const big = JSON.stringify({ bounds: [0, 0, 1, 1], pad: "x".repeat(1024 * 1024) });
  const sized = await send("/api/spaces", { method: "POST", headers: json, body: big });
  assert.equal(sized.status, 413);
  assert.equal(code(sized.body), "too_large");
  let pulled = 0;
  const stream = new ReadableStream<Uint8Array>({
    pull(c) {
      if (pulled >= 4 * 1024 * 1024) return c.close();
      pulled += 64 * 1024;
      c.enqueue(new Uint8Array(64 * 1024).fill(0x20));
    },
  });
  const chunked = await send("/api/spaces", { method: "POST", headers: json, body: stream });
  assert.equal(chunked.status, 413);
  assert.equal(code(chunked.body), "too_large");
  assert.ok(pulled <= 1024 * 1024 + 3 * 64 * 1024, `read ${pulled} bytes of a body over the limit`);
  // Just under the limit is read and validated.
  const under = await send("/api/spaces", {
    method: "POST",
    headers: json,
    body: JSON.stringify({ bounds: [0, 0, 1, 1], pad: "x".repeat(1000) }),
  });
  assert.equal(under.status, 400);
  assert.match((under.body as ErrorBody).error.message, /Unrecognized key: "pad"/);
});

Deno.test("Origin: the API's own and the listed ones; CORS and preflights only for the listed ones", async () => {
  const ops = "https://ops.example";
  const { backend, send } = appWith({ origins: [ops, "http://127.0.0.1:3000/"] });
  const own = await send("/api/shutdown", { method: "POST", headers: { ...json, origin: "http://127.0.0.1:8080" } });
  assert.equal(own.status, 202);
  assert.equal(own.headers.get("access-control-allow-origin"), null, "no CORS for the API's own page");
  for (const origin of [ops, "http://127.0.0.1:3000", "HTTPS://OPS.EXAMPLE"]) {
    const r = await send("/api/shutdown", { method: "POST", headers: { ...json, origin } });
    assert.equal(r.status, 202, origin);
    assert.equal(r.headers.get("access-control-allow-origin"), origin);
  }
  for (
    const origin of [
      "https://evil.example",
      "null",
      "http://127.0.0.1:8081",
      "https://127.0.0.1:8080",
      "http://ops.example",
      "https://ops.example:444",
      "file://",
    ]
  ) {
    const r = await send("/api/shutdown", { method: "POST", headers: { ...json, origin } });
    assert.equal(r.status, 403, origin);
    assert.equal(code(r.body), "forbidden_origin", origin);
    assert.equal(r.headers.get("access-control-allow-origin"), null, origin);
  }
  assert.equal(backend.shutdowns, 4);

  const preflight = (origin: string) =>
    send("/api/spaces/3", {
      method: "OPTIONS",
      headers: { origin, "access-control-request-method": "DELETE", "access-control-request-headers": "content-type" },
    });
  const pre = await preflight(ops);
  assert.equal(pre.status, 204);
  assert.equal(pre.headers.get("access-control-allow-origin"), ops);
  assert.match(pre.headers.get("access-control-allow-methods") ?? "", /DELETE/);
  assert.equal(pre.headers.get("access-control-max-age"), "600");
  const evil = await preflight("https://evil.example");
  assert.equal(evil.status, 403);
  assert.equal(code(evil.body), "forbidden_origin");
  assert.equal(evil.headers.get("access-control-allow-origin"), null);
});

Deno.test("the checks run in order: Host, token, Origin, Content-Type, body size", async () => {
  const { backend, send } = appWith({ token: "t0ken", origins: ["https://ops.example"] });
  const auth = { authorization: "Bearer t0ken" };
  const evil = { origin: "https://evil.example" };
  const form = { "content-type": "text/plain" };
  const big = "x".repeat(1024 * 1024 + 1);
  // A rebound page learns nothing, not even that a token is needed.
  const host = await send("/api/shutdown", { method: "POST", host: "evil.example", headers: { ...evil, ...form } });
  assert.equal(host.status, 403);
  assert.equal(code(host.body), "forbidden_host");
  assert.equal(host.headers.get("www-authenticate"), null);
  assert.equal((await send("/api/shutdown", { method: "POST", headers: { ...evil, ...form } })).status, 401);
  const origin = await send("/api/shutdown", { method: "POST", headers: { ...auth, ...evil, ...form } });
  assert.equal(code(origin.body), "forbidden_origin");
  const type = await send("/api/shutdown", { method: "POST", headers: { ...auth, ...form }, body: big });
  assert.equal(code(type.body), "unsupported_media_type");
  const size = await send("/api/shutdown", { method: "POST", headers: { ...auth, ...json }, body: big });
  assert.equal(code(size.body), "too_large");
  assert.equal(backend.shutdowns, 0);
  // A listed origin's preflight is answered without the token (browsers send none).
  const pre = await send("/api/shutdown", {
    method: "OPTIONS",
    headers: { origin: "https://ops.example", "access-control-request-method": "POST" },
  });
  assert.equal(pre.status, 204);
  // Its own-origin preflight is not CORS business: the token is still asked for.
  const ownPre = await send("/api/shutdown", {
    method: "OPTIONS",
    headers: { origin: "http://127.0.0.1:8080", "access-control-request-method": "POST" },
  });
  assert.equal(ownPre.status, 401);
});

Deno.test("bad --admin-hosts and --admin-origins entries are refused at start, naming the flag", () => {
  assert.throws(() => createAdminApp(fakeBackend(), { hosts: ["a/b"] }), /^Error: --admin-hosts: "a\/b"/);
  assert.throws(() => createAdminApp(fakeBackend(), { origins: ["ops.example"] }), /^Error: --admin-origins:/);
});
