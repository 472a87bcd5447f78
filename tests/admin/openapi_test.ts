/** The OpenAPI document generated from the route schemas, and the reference page at /api/docs. */
import assert from "node:assert/strict";
import { type AdminBackend, createAdminApp } from "../../admin/mod.ts";
import { RequestError } from "../../core/views.ts";

const notFound = (): never => {
  throw new RequestError("not_found", "nothing here");
};

/** A backend that knows nothing: enough for the document, the page and validation. */
const backend: AdminBackend = {
  health: () => ({ ok: true, role: "cellappmgr", version: "test" }),
  cluster: () => ({ processes: [] }),
  shutdownCluster: () => ({ stopping: true, processes: 0 }),
  listSpaces: () => [],
  getSpace: notFound,
  patchSpace: notFound,
  retireCellApp: notFound,
  spawnInto: notFound,
  createSpace: () => Promise.resolve({ id: 2 }),
  deleteSpace: notFound,
  getCellApp: notFound,
  getCell: notFound,
  findEntity: notFound,
  inspectEntity: notFound,
  onProcessChange: () => () => {},
  shutdownProcess: notFound,
  players: () => Promise.resolve({ players: [], total: 0, truncated: false, unanswered: [] }),
  kickPlayer: (name, reason) => {
    if (name !== "alice") notFound();
    kicks.push(reason);
    return Promise.resolve({ account: name, baseapp: 2, kicked: true });
  },
};
/** The reasons the backend was asked to kick alice with. */
const kicks: string[] = [];

type Json = Record<string, unknown>;
type Spec = {
  openapi: string;
  info: { title: string; version: string };
  paths: Record<string, Record<string, Json>>;
  components: { schemas: Record<string, Json>; securitySchemes?: Json };
  security?: unknown[];
};

function get(app: ReturnType<typeof createAdminApp>, path: string, headers: Record<string, string> = {}) {
  return app.request(`http://127.0.0.1:8080${path}`, { headers: { host: "127.0.0.1:8080", ...headers } });
}

/** Every `$ref` in `v`, recursively. */
function refs(v: unknown, out: string[] = []): string[] {
  if (Array.isArray(v)) { for (const x of v) refs(x, out); }
  else if (v && typeof v === "object") {
    for (const [k, x] of Object.entries(v)) k === "$ref" && typeof x === "string" ? out.push(x) : refs(x, out);
  }
  return out;
}

const METHODS = new Set(["get", "put", "post", "delete", "options", "head", "patch", "trace"]);

Deno.test("the OpenAPI document lists every route the app serves, and only those", async () => {
  const app = createAdminApp(backend, { entityTypes: () => ["NPC"] });
  const res = await get(app, "/api/openapi.json");
  assert.equal(res.status, 200);
  const spec = await res.json() as Spec;
  const served = new Set(
    app.routes.filter((r) => r.method !== "ALL").map((r) =>
      `${r.method.toLowerCase()} ${r.path.replaceAll(/:([^/]+)/g, "{$1}")}`
    ),
  );
  const declared = new Set(
    Object.entries(spec.paths).flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m} ${path}`)),
  );
  assert.deepEqual([...served].filter((r) => !declared.has(r)), [], "routes served without a schema");
  assert.deepEqual([...declared].filter((r) => !served.has(r)), [], "routes declared but not served");
  for (
    const r of [
      "get /api/health",
      "post /api/spaces",
      "post /api/spaces/{id}/entities",
      "get /api/cellapps/{id}/cells/{spaceId}",
      "get /metrics",
      "get /api/openapi.json",
      "get /api/docs",
      "get /api/watch",
      "post /api/watch/ticket",
      "post /api/processes/{id}/shutdown",
      "get /api/players",
      "post /api/players/{name}/kick",
      "get /",
    ]
  ) assert.ok(declared.has(r), r);
});

Deno.test("the OpenAPI document is structurally OpenAPI 3: operations, parameters, bodies, answers, schemas", async () => {
  const app = createAdminApp(backend, { token: "t0ken" });
  const spec = await (await get(app, "/api/openapi.json", { authorization: "Bearer t0ken" })).json() as Spec;
  assert.match(spec.openapi, /^3\.0\.\d+$/);
  assert.equal(typeof spec.info.title, "string");
  assert.equal(typeof spec.info.version, "string");
  assert.deepEqual(spec.security, [{ bearer: [] }]);
  assert.deepEqual(spec.components.securitySchemes, { bearer: { type: "http", scheme: "bearer" } });
  for (const [path, ops] of Object.entries(spec.paths)) {
    assert.match(path, /^\/[a-z0-9_/{}.]*$/i, path);
    const inPath = [...path.matchAll(/{([^}]+)}/g)].map((m) => m[1]).sort();
    for (const [method, op] of Object.entries(ops)) {
      const where = `${method.toUpperCase()} ${path}`;
      assert.ok(METHODS.has(method), `${where}: not an HTTP method`);
      assert.equal(typeof op.summary, "string", `${where}: no summary`);
      const params = (op.parameters ?? []) as { name: string; in: string; required?: boolean; schema?: Json }[];
      const pathParams = params.filter((p) => p.in === "path");
      assert.deepEqual(pathParams.map((p) => p.name).sort(), inPath, `${where}: path parameters`);
      for (const p of pathParams) {
        assert.equal(p.required, true, `${where}: ${p.name} must be required`);
        // Ids are integers; a player is named by its account.
        const type = p.name === "name" ? "string" : "integer";
        assert.equal(p.schema?.type, type, `${where}: ${p.name} is an ${type}`);
      }
      const responses = op.responses as Record<string, { description?: string; content?: Record<string, Json> }>;
      const statuses = Object.keys(responses);
      // A WebSocket's success is its upgrade.
      assert.ok(statuses.some((s) => /^(2\d\d|101)$/.test(s)), `${where}: no success answer`);
      for (const [s, r] of Object.entries(responses)) {
        assert.match(s, /^[1-5]\d\d$/, `${where}: status ${s}`);
        assert.equal(typeof r.description, "string", `${where} ${s}: no description`);
        for (const [media, c] of Object.entries(r.content ?? {})) {
          assert.ok(c.schema, `${where} ${s} ${media}: no schema`);
        }
        if (/^[45]/.test(s)) {
          assert.deepEqual(r.content?.["application/json"]?.schema, { $ref: "#/components/schemas/Error" }, where);
        }
      }
      if (method === "post" || method === "patch") assert.ok(statuses.includes("415"), `${where}: 415 missing`);
    }
  }
  // Every body the API takes is declared with its schema.
  for (
    const [path, method] of [["/api/spaces", "post"], ["/api/spaces/{id}/entities", "post"], [
      "/api/spaces/{id}",
      "patch",
    ]]
  ) {
    const body = spec.paths[path][method].requestBody as {
      required: boolean;
      content: Record<string, { schema: Json }>;
    };
    assert.equal(body.required, true);
    assert.ok(body.content["application/json"].schema, `${method} ${path}: body schema`);
  }
  const every = refs(spec);
  assert.ok(every.length > 10);
  for (const ref of every) {
    const name = ref.replace("#/components/schemas/", "");
    assert.ok(ref.startsWith("#/components/schemas/") && spec.components.schemas[name], `dangling ${ref}`);
  }
  const create = spec.components.schemas.CreateSpace as { required: string[]; properties: Record<string, Json> };
  assert.deepEqual(create.required, ["bounds"]);
  assert.deepEqual(Object.keys(create.properties).sort(), [
    "aoiRadius",
    "balance",
    "bounds",
    "cells",
    "entities",
    "geometry",
    "ghostRadius",
  ]);
  const space = spec.components.schemas.Space as { properties: Record<string, Json> };
  assert.deepEqual(Object.keys(space.properties).sort(), [
    "balance",
    "bounds",
    "cells",
    "id",
    "isDefault",
    "navGeometry",
    "settings",
    "shutDownWhenEmpty",
    "tree",
  ]);
  const metrics = spec.paths["/metrics"].get.responses as Record<string, { content: Json }>;
  assert.ok(metrics["200"].content["text/plain"]);
});

Deno.test("/api/docs is a self-contained page that draws /api/openapi.json, and needs no token itself", async () => {
  const app = createAdminApp(backend, { token: "t0ken" });
  const res = await get(app, "/api/docs");
  assert.equal(res.status, 200);
  assert.match(res.headers.get("content-type") ?? "", /^text\/html/);
  const html = await res.text();
  assert.match(html, /^<!doctype html>/i);
  assert.match(html, /fetch\("\/api\/openapi\.json"/);
  assert.doesNotMatch(html, /<script[^>]+src=|<link[^>]+href=|@import|https?:\/\//i, "nothing loaded from elsewhere");
  assert.equal((await get(app, "/api/openapi.json")).status, 401, "the document itself needs the token");
  assert.equal((await get(app, "/api/docs", { host: "evil.example" })).status, 403, "the Host guard still applies");
});

Deno.test("routes declared through the schemas keep the error format and name the bad field", async () => {
  const app = createAdminApp(backend, { entityTypes: () => ["NPC"] });
  const bad = await get(app, "/api/spaces/abc");
  assert.equal(bad.status, 400);
  const err = (await bad.json() as { error: { code: string; message: string } }).error;
  assert.equal(err.code, "bad_request");
  assert.match(err.message, /^id: /);
  const post = (body: unknown) =>
    app.request("http://127.0.0.1:8080/api/spaces/3/entities", {
      method: "POST",
      headers: { host: "127.0.0.1:8080", "content-type": "application/json" },
      body: JSON.stringify(body),
    });
  const noType = await post({ entities: [{ type: "Dragon", count: 1 }] });
  assert.equal(noType.status, 400);
  assert.match((await noType.json()).error.message, /^entities\.0\.type: unknown entity type; known types: NPC/);
  const empty = await app.request("http://127.0.0.1:8080/api/spaces", {
    method: "POST",
    headers: { host: "127.0.0.1:8080", "content-type": "application/json" },
  });
  assert.equal(empty.status, 400, "a required body that is missing is a 400");
  const noMetrics = await get(app, "/metrics");
  assert.equal(noMetrics.status, 503);
  assert.equal((await noMetrics.json()).error.code, "unavailable");
});

Deno.test("POST /api/players/:name/kick: the body is optional, a bad one or a bad name is a 400 naming it", async () => {
  const app = createAdminApp(backend);
  const kick = (name: string, body?: string) =>
    app.request(`http://127.0.0.1:8080/api/players/${name}/kick`, {
      method: "POST",
      headers: { host: "127.0.0.1:8080", "content-type": "application/json" },
      body,
    });
  kicks.length = 0;
  const plain = await kick("alice");
  assert.equal(plain.status, 200, await plain.clone().text());
  assert.deepEqual(await plain.json(), { account: "alice", baseapp: 2, kicked: true });
  assert.equal((await kick("alice", JSON.stringify({ reason: "spamming" }))).status, 200);
  assert.deepEqual(kicks, ["kicked by an operator", "spamming"]);
  for (
    const [body, field] of [['{"reason": 5}', /^reason: /], ['{"why": "x"}', /why/], ['{"reason": ""}', /^reason/]]
  ) {
    const res = await kick("alice", body as string);
    assert.equal(res.status, 400, body as string);
    assert.match((await res.json()).error.message, field as RegExp);
  }
  const notJson = await kick("alice", "{nope");
  assert.equal(notJson.status, 400);
  const badName = await kick("a%20b");
  assert.equal(badName.status, 400);
  assert.match((await badName.json()).error.message, /^name: not an account name/);
  const nobody = await kick("bob");
  assert.equal(nobody.status, 404);
  assert.equal((await nobody.json()).error.code, "not_found");
  assert.deepEqual(kicks, ["kicked by an operator", "spamming"], "refused requests kick nobody");
});
