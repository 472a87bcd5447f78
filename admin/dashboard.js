// The operators' dashboard (served at GET / with dashboard.html): draws the cluster from the watch socket
// and acts through the REST routes. Plain browser JavaScript, no build step. Everything from the server is put on
// the page with textContent, never as HTML.

import { colorOf, drawSpace, worldView } from "./dashboard_draw.js";

const $ = (id) => document.getElementById(id);
const canvas = $("world");

const state = {
  token: sessionStorage.getItem("seamless.token") ?? "",
  ws: null,
  backoff: 500,
  spaceId: null,
  spaces: [],
  geometry: null,
  load: null,
  entities: null,
  entityId: null,
  entity: null,
  processes: [],
  spawnAt: null,
  /** What the last frame drew, for tests and for clicks: counts, and every entity dot with its canvas point. */
  drawn: { space: null, cells: 0, entities: 0, ghosts: 0, points: [] },
};

// A token in the URL's fragment (never sent to the server) is taken once and removed from the address bar.
const fromHash = new URLSearchParams(location.hash.slice(1)).get("token");
if (fromHash) {
  state.token = fromHash;
  sessionStorage.setItem("seamless.token", fromHash);
  history.replaceState(null, "", location.pathname);
}

function setStatus(text, kind = "") {
  const el = $("status");
  el.textContent = text;
  el.className = kind;
}

function log(text, kind = "") {
  const line = document.createElement("div");
  line.className = kind;
  line.textContent = `${new Date().toLocaleTimeString()} ${text}`;
  $("log").prepend(line);
  while ($("log").childElementCount > 200) $("log").lastElementChild.remove();
}

async function api(method, path, body) {
  const headers = {};
  if (state.token) headers.Authorization = `Bearer ${state.token}`;
  if (method !== "GET") headers["Content-Type"] = "application/json";
  const res = await fetch(path, {
    method,
    headers,
    body: method === "GET" ? undefined : JSON.stringify(body ?? {}),
  });
  const data = await res.json().catch(() => null);
  if (res.status === 401) $("auth").classList.add("shown");
  if (!res.ok) throw new Error(data?.error?.message ?? `${method} ${path}: HTTP ${res.status}`);
  return data;
}

/** Runs an action, logging what it did or why it failed. */
async function act(what, fn) {
  try {
    const out = await fn();
    log(`${what}: ${JSON.stringify(out)}`);
    return out;
  } catch (e) {
    log(`${what} failed: ${e.message}`, "err");
    return null;
  }
}

// --- the watch socket -------------------------------------------------------------------------------------------

function send(msg) {
  if (state.ws?.readyState === WebSocket.OPEN) state.ws.send(JSON.stringify(msg));
}

async function connect() {
  setStatus("connecting…");
  let ticket;
  try {
    ticket = (await api("POST", "/api/watch/ticket")).ticket;
  } catch (e) {
    setStatus(`cannot watch: ${e.message}`, "bad");
    return retry();
  }
  const scheme = location.protocol === "https:" ? "wss" : "ws";
  const ws = new WebSocket(`${scheme}://${location.host}/api/watch?ticket=${encodeURIComponent(ticket)}`);
  state.ws = ws;
  ws.onmessage = (e) => onMessage(JSON.parse(e.data));
  ws.onopen = () => {
    state.backoff = 500;
    setStatus("live", "good");
  };
  ws.onclose = (e) => {
    if (state.ws !== ws) return;
    state.ws = null;
    setStatus(`disconnected${e.reason ? `: ${e.reason}` : ""}; reconnecting`, "bad");
    retry();
  };
}

function retry() {
  setTimeout(connect, state.backoff);
  state.backoff = Math.min(state.backoff * 2, 10_000);
}

function onMessage(m) {
  if (m.op === "hello") {
    send({ op: "subscribe", topic: "cluster" });
    if (state.spaceId !== null) send({ op: "subscribe", topic: `space:${state.spaceId}` });
    if (state.entityId !== null) send({ op: "subscribe", topic: `entity:${state.entityId}` });
    return;
  }
  if (m.op === "error") return log(`watch: ${m.topic ? `${m.topic}: ` : ""}${m.message}`, "err");
  if (m.op === "unsubscribed" && m.reason) return log(`${m.topic}: ${m.reason}`);
  if (m.op) return;
  if (m.topic === "cluster") return onCluster(m);
  if (m.topic === `space:${state.spaceId}`) return onSpace(m);
  if (m.topic === `entity:${state.entityId}`) return onEntity(m);
}

// --- processes ----------------------------------------------------------------------------------------------------

function onCluster(m) {
  if (m.type === "processes") {
    state.processes = m.processes;
    renderProcesses();
  } else if (m.type === "event") {
    const p = m.process;
    const extra = m.previousId !== undefined ? ` (was ${p.role} ${m.previousId})` : "";
    log(`${p.role} ${p.id} (pid ${p.pid}, ${p.address}) ${m.event}${extra}${m.reason ? `: ${m.reason}` : ""}`, m.event);
    refreshSpaces();
  }
}

function cell(text, cls = "") {
  const td = document.createElement("td");
  td.textContent = text;
  if (cls) td.className = cls;
  return td;
}

function button(text, onClick, danger = false) {
  const b = document.createElement("button");
  b.textContent = text;
  if (danger) b.className = "danger";
  b.onclick = onClick;
  return b;
}

function renderProcesses() {
  const body = $("processes").tBodies[0];
  body.replaceChildren(...state.processes.map((p) => {
    const tr = document.createElement("tr");
    tr.dataset.id = p.id;
    const load = document.createElement("td");
    const bar = document.createElement("span");
    bar.className = "bar";
    bar.style.width = `${Math.round(Math.min(1, p.load) * 60)}px`;
    bar.style.background = p.role === "cellapp" ? colorOf(p.id) : "";
    load.append(bar, ` ${Math.round(p.load * 100)}%`);
    const actions = document.createElement("td");
    if (p.role === "cellapp") {
      actions.append(
        button("retire", () => act(`retire cellapp ${p.id}`, () => api("POST", `/api/cellapps/${p.id}/retire`))),
      );
    }
    if (p.role !== "cellappmgr") {
      actions.append(
        button("shut down", () => {
          if (!confirm(`Shut down ${p.role} ${p.id} gracefully?`)) return;
          act(`shut down ${p.role} ${p.id}`, () => api("POST", `/api/processes/${p.id}/shutdown`));
        }),
        button("kill", () => {
          if (!confirm(`Kill ${p.role} ${p.id} now? Fault tolerance brings back what it held.`)) return;
          act(`kill ${p.role} ${p.id}`, () => api("POST", `/api/processes/${p.id}/shutdown?force=true`));
        }, true),
      );
    }
    tr.append(
      cell(p.id),
      cell(p.role),
      cell(p.pid, "num"),
      cell(p.address),
      load,
      cell(`${p.lastHeartbeatMsAgo} ms`, "num"),
      cell(`${Math.round(p.uptimeS)} s`, "num"),
      actions,
    );
    return tr;
  }));
}

// --- spaces -------------------------------------------------------------------------------------------------------

async function refreshSpaces() {
  let list;
  try {
    list = (await api("GET", "/api/spaces")).spaces;
  } catch {
    return;
  }
  state.spaces = list;
  const select = $("space");
  const keep = state.spaceId;
  select.replaceChildren(...list.map((s) => {
    const o = document.createElement("option");
    o.value = s.id;
    o.textContent = `space ${s.id}${s.isDefault ? " (default)" : ""} · ${s.cells} cells · ${s.entities} entities`;
    return o;
  }));
  const wanted = list.find((s) => s.id === keep) ?? list[0];
  if (wanted) select.value = String(wanted.id);
  if ((wanted?.id ?? null) !== keep) watchSpace(wanted?.id ?? null);
}

function watchSpace(id) {
  if (state.spaceId !== null) send({ op: "unsubscribe", topic: `space:${state.spaceId}` });
  state.spaceId = id;
  state.geometry = state.load = state.entities = null;
  if (id !== null) send({ op: "subscribe", topic: `space:${id}` });
  draw();
}

function onSpace(m) {
  if (m.type === "geometry") {
    state.geometry = m;
    $("balance").checked = m.balance.enabled;
  } else if (m.type === "load") state.load = m;
  else if (m.type === "entities") state.entities = m;
  scheduleDraw();
}

// --- drawing (dashboard_draw.js) ---------------------------------------------------------------------------------

let drawPending = false;
function scheduleDraw() {
  if (drawPending) return;
  drawPending = true;
  requestAnimationFrame(() => {
    drawPending = false;
    draw();
  });
}

function draw() {
  record(drawSpace(canvas, state));
}

function view() {
  return worldView(state.geometry.bounds, canvas);
}

function record(drawn) {
  state.drawn = drawn;
  canvas.dataset.space = drawn.space ?? "";
  canvas.dataset.cells = drawn.cells;
  canvas.dataset.entities = drawn.entities;
  canvas.dataset.ghosts = drawn.ghosts;
  const s = state.spaces.find((x) => x.id === state.spaceId);
  $("space-info").textContent = s ? `bounds ${s.bounds.join(", ")} · drawn ${drawn.entities} entities` : "";
  const apps = [...new Set((state.geometry?.cells ?? []).map((c) => c.cellapp))].sort((a, b) => a - b);
  $("legend").replaceChildren(...apps.map((a) => {
    const span = document.createElement("span");
    span.style.color = colorOf(a);
    span.textContent = `■ cellapp ${a}`;
    return span;
  }));
}

// --- clicks: watching an entity, or placing a spawn --------------------------------------------------------------

function canvasPoint(ev) {
  const r = canvas.getBoundingClientRect();
  return [(ev.clientX - r.left) * canvas.width / r.width, (ev.clientY - r.top) * canvas.height / r.height];
}

canvas.addEventListener("click", (ev) => {
  if (!state.geometry) return;
  const [px, py] = canvasPoint(ev);
  if ($("spawn-at-click").checked) {
    state.spawnAt = view().world(px, py);
    $("spawn-at-click").checked = false;
    scheduleDraw();
    return;
  }
  let best = null, bestD = 12 * 12;
  for (const p of state.drawn.points) {
    const d = (p[1] - px) ** 2 + (p[2] - py) ** 2;
    if (d < bestD) [best, bestD] = [p, d];
  }
  if (best) watchEntity(best[0]);
});

function watchEntity(id) {
  if (state.entityId !== null) send({ op: "unsubscribe", topic: `entity:${state.entityId}` });
  state.entityId = id;
  state.entity = null;
  $("entity").hidden = id === null;
  $("entity-none").hidden = id !== null;
  $("entity").dataset.id = id ?? "";
  $("entity-props").tBodies[0].replaceChildren();
  $("entity-title").textContent = id === null ? "" : `entity ${id}`;
  $("entity-where").textContent = "";
  if (id !== null) send({ op: "subscribe", topic: `entity:${id}` });
  scheduleDraw();
}

function onEntity(m) {
  if (m.type === "gone") {
    $("entity-where").textContent = `gone: ${m.message}`;
    return;
  }
  const e = m.entity;
  state.entity = e;
  $("entity-title").textContent = `${e.type} ${e.id}`;
  const [x, y, z] = e.position.map((n) => n.toFixed(1));
  $("entity-where").textContent = `space ${e.spaceId} · cellapp ${e.cellapp} · ghosts on ${
    e.ghosts.length ? e.ghosts.join(", ") : "none"
  } · base ${e.base ?? "none"} · (${x}, ${y}, ${z})`;
  $("entity-props").tBodies[0].replaceChildren(...e.properties.map((p) => {
    const tr = document.createElement("tr");
    tr.dataset.name = p.name;
    const value = JSON.stringify(p.value);
    tr.append(cell(p.name), cell(p.flags), cell(value.length > 160 ? `${value.slice(0, 160)}…` : value));
    return tr;
  }));
}

// --- actions ------------------------------------------------------------------------------------------------------

$("entity-close").onclick = () => watchEntity(null);
$("space").onchange = () => watchSpace(Number($("space").value));
$("balance").onchange = () =>
  act(
    `balancing of space ${state.spaceId}`,
    () =>
      api("PATCH", `/api/spaces/${state.spaceId}`, { balance: $("balance").checked }).then((s) => ({
        enabled: s.balance.enabled,
      })),
  );
$("delete-space").onclick = () => {
  if (state.spaceId === null || !confirm(`Delete space ${state.spaceId}?`)) return;
  act(`delete space ${state.spaceId}`, () => api("DELETE", `/api/spaces/${state.spaceId}`)).then(refreshSpaces);
};
$("spawn").onclick = () => {
  if (state.spaceId === null) return;
  const entry = { type: $("spawn-type").value, count: Number($("spawn-count").value) };
  if (state.spawnAt) entry.position = [state.spawnAt[0], 0, state.spawnAt[1]];
  state.spawnAt = null;
  act(
    `spawn into space ${state.spaceId}`,
    () => api("POST", `/api/spaces/${state.spaceId}/entities`, { entities: [entry] }),
  )
    .then(refreshSpaces);
};
$("create-space").onclick = () => {
  const n = (id) => Number($(id).value);
  const npcs = n("new-npcs");
  const body = {
    bounds: [n("new-minx"), n("new-minz"), n("new-maxx"), n("new-maxz")],
    cells: n("new-cells"),
    ...(npcs > 0 ? { entities: [{ type: $("spawn-type").value, count: npcs }] } : {}),
  };
  act("create space", () => api("POST", "/api/spaces", body)).then(async (out) => {
    await refreshSpaces();
    if (out) {
      $("space").value = String(out.id);
      watchSpace(out.id);
    }
  });
};
$("auth").onsubmit = (ev) => {
  ev.preventDefault();
  state.token = $("token").value;
  sessionStorage.setItem("seamless.token", state.token);
  $("auth").classList.remove("shown");
  state.ws?.close();
  if (!state.ws) connect();
  refreshSpaces();
};

/** For tests and the console: the live state, and where an entity's dot is on the page. */
globalThis.dashboard = {
  state,
  get drawn() {
    return state.drawn;
  },
  pagePointOf(id) {
    const p = state.drawn.points.find((q) => q[0] === id);
    if (!p) return null;
    const r = canvas.getBoundingClientRect();
    return [r.left + p[1] * r.width / canvas.width, r.top + p[2] * r.height / canvas.height];
  },
};

connect();
refreshSpaces();
setInterval(refreshSpaces, 3000);
