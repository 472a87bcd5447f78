import assert from "node:assert/strict";
import { VERSION } from "../../core/version.ts";
import { api, Procs } from "../../testing/procs.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };

Deno.test("admin API: health, JSON errors, 404s and the bearer token", opts, async () => {
  await using procs = new Procs();
  const open = await procs.start(["--role=mgr", "--port=0", "--admin-port=0"]);
  const a = open.ready.admin!;
  const health = await api(a, "/api/health");
  assert.equal(health.status, 200);
  assert.deepEqual(health.body, { ok: true, role: "cellappmgr", version: VERSION });
  const missing = await api(a, "/api/nothing-here");
  assert.equal(missing.status, 404);
  assert.deepEqual(missing.body, { error: { code: "not_found", message: "no route GET /api/nothing-here" } });
  assert.equal((await api(a, "/api/shutdown")).status, 404, "shutdown is POST only");

  const locked = await procs.start(["--role=mgr", "--port=0", "--admin-port=0"], {
    env: { SEAMLESS_ADMIN_TOKEN: "t0ken" },
  });
  const b = locked.ready.admin!;
  const none = await api(b, "/api/cluster");
  assert.equal(none.status, 401);
  assert.equal((none.body as { error: { code: string } }).error.code, "unauthorized");
  assert.match(none.headers.get("www-authenticate") ?? "", /^Bearer/);
  const wrong = await api(b, "/api/cluster", { headers: { authorization: "Bearer t0ke" } });
  assert.equal(wrong.status, 401);
  assert.equal((await api(b, "/api/health", { headers: { authorization: "Bearer nope" } })).status, 401);
  const right = await api(b, "/api/cluster", { headers: { authorization: "Bearer t0ken" } });
  assert.equal(right.status, 200);
  assert.equal((right.body as { processes: unknown[] }).processes.length, 1);
});
