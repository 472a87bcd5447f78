/**
 * The reference page of the admin API at /api/docs: one self-contained HTML
 * page (no script or style from elsewhere, so it works offline) that fetches
 * /api/openapi.json and lists every route with its parameters, body and answers.
 */

/** The page's HTML. */
export const DOCS_PAGE: string = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>seamless admin API</title>
<style>
  body { font: 14px/1.45 system-ui, sans-serif; margin: 0 auto; max-width: 60rem; padding: 1rem; color: #222; }
  h1 { font-size: 1.4rem; margin: 0 0 .3rem; }
  .route { border: 1px solid #ccc; border-radius: 6px; margin: .6rem 0; }
  .route > summary { cursor: pointer; padding: .45rem .6rem; font-family: ui-monospace, monospace; }
  .route > div { padding: 0 .8rem .6rem; }
  .m { display: inline-block; min-width: 4.2rem; font-weight: bold; }
  .get { color: #0a6; } .post { color: #06c; } .patch { color: #a60; } .delete { color: #c22; }
  .sum { font-family: system-ui, sans-serif; color: #555; margin-left: .6rem; }
  pre { background: #f5f5f5; padding: .5rem; overflow-x: auto; margin: .3rem 0; }
  h3 { font-size: .95rem; margin: .7rem 0 .2rem; }
  #err { color: #c22; }
  label { display: block; margin: .5rem 0; }
</style>
</head>
<body>
<h1>seamless admin API</h1>
<p id="intro">Generated from <a href="/api/openapi.json">/api/openapi.json</a>.</p>
<label>Bearer token, when the cluster has one: <input id="token" type="password" autocomplete="off">
  <button id="load">Load</button></label>
<p id="err"></p>
<div id="routes"></div>
<script>
"use strict";
const $ = (id) => document.getElementById(id);
function el(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  for (const k of kids) e.append(k);
  return e;
}
let spec = null;
function resolve(s) {
  while (s && s.$ref) s = spec.components.schemas[s.$ref.split("/").pop()];
  return s || {};
}
// A schema as a short type expression, refs expanded once per path.
function show(s, depth, seen) {
  const ref = s && s.$ref ? s.$ref.split("/").pop() : null;
  if (ref && seen.has(ref)) return ref;
  const next = ref ? new Set([...seen, ref]) : seen;
  s = resolve(s);
  const pad = "  ".repeat(depth + 1), end = "  ".repeat(depth);
  const nullable = s.nullable ? " | null" : "";
  if (s.enum) return s.enum.map((v) => JSON.stringify(v)).join(" | ") + nullable;
  if (s.oneOf || s.anyOf) return (s.oneOf || s.anyOf).map((x) => show(x, depth, next)).join(" | ") + nullable;
  if (s.allOf) return s.allOf.map((x) => show(x, depth, next)).join(" & ") + nullable;
  if (s.type === "array") {
    const n = s.minItems !== undefined && s.minItems === s.maxItems ? " (" + s.minItems + " items)" : "";
    return show(s.items || {}, depth, next) + "[]" + n + nullable;
  }
  if (s.type === "object" || s.properties) {
    const req = new Set(s.required || []);
    const props = Object.entries(s.properties || {}).map(([k, v]) =>
      pad + k + (req.has(k) ? "" : "?") + ": " + show(v, depth + 1, next) +
      (resolve(v).description ? "   // " + resolve(v).description : ""));
    if (s.additionalProperties) props.push(pad + "[key: string]: " + show(s.additionalProperties === true ? {} : s.additionalProperties, depth + 1, next));
    return props.length ? "{\\n" + props.join("\\n") + "\\n" + end + "}" + nullable : "object" + nullable;
  }
  let t = s.type || "any";
  const lim = [];
  if (s.minimum !== undefined) lim.push(">= " + s.minimum);
  if (s.maximum !== undefined) lim.push("<= " + s.maximum);
  return t + (lim.length ? " (" + lim.join(", ") + ")" : "") + nullable;
}
function route(path, method, op) {
  const body = el("div");
  if (op.description) body.append(el("p", {}, op.description));
  if (op.parameters && op.parameters.length) {
    body.append(el("h3", {}, "Parameters"));
    body.append(el("pre", {}, op.parameters.map((p) => p.in + " " + p.name + ": " + show(p.schema || {}, 0, new Set())).join("\\n")));
  }
  const rb = op.requestBody && op.requestBody.content && op.requestBody.content["application/json"];
  if (rb) {
    body.append(el("h3", {}, "Body (application/json)"));
    body.append(el("pre", {}, show(rb.schema, 0, new Set())));
  }
  body.append(el("h3", {}, "Answers"));
  for (const [status, r] of Object.entries(op.responses || {})) {
    const [type, media] = Object.entries(r.content || {})[0] || [];
    body.append(el("p", {}, el("b", {}, status), " " + (r.description || "") + (type ? " (" + type + ")" : "")));
    if (media && media.schema && type === "application/json" && Number(status) < 400) {
      body.append(el("pre", {}, show(media.schema, 0, new Set())));
    }
  }
  const head = el("summary", {}, el("span", { class: "m " + method }, method.toUpperCase()), path,
    el("span", { class: "sum" }, op.summary || ""));
  return el("details", { class: "route", "data-path": path, "data-method": method }, head, body);
}
async function load() {
  $("err").textContent = "";
  const token = $("token").value.trim();
  sessionStorage.setItem("seamless-admin-token", token);
  const headers = token ? { authorization: "Bearer " + token } : {};
  try {
    const res = await fetch("/api/openapi.json", { headers });
    const got = await res.json();
    if (!res.ok) throw new Error(got.error ? got.error.message : "HTTP " + res.status);
    spec = got;
  } catch (e) {
    $("err").textContent = "Could not load /api/openapi.json: " + e.message;
    return;
  }
  $("intro").textContent = (spec.info.description || "") + " OpenAPI " + spec.openapi + ".";
  const list = $("routes");
  list.replaceChildren();
  for (const [path, ops] of Object.entries(spec.paths)) {
    for (const [method, op] of Object.entries(ops)) list.append(route(path, method, op));
  }
  document.body.dataset.loaded = String(list.children.length);
}
$("token").value = sessionStorage.getItem("seamless-admin-token") || "";
$("load").addEventListener("click", load);
load();
</script>
</body>
</html>
`;
