// The demo page's view: the login form, the world around the player, the mini-map of the space's cells coloured by
// cellapp, the chat and the toast of a cell crossing. The game logic is app.js (demo/app.ts with the SDK).

// app.js is built when the demo starts (dist/demo/, not in the source tree): imported by a name that `deno check`
// does not follow. Not awaited at the top: a module's top-level await does not hold back the page's load event, and
// the login form's handler below must be in place before anyone can press Enter (or the form submits natively and
// reloads the page without its player).
const APP = "./app.js";
const app = import(APP);
app.catch(() => {}); // a failed load is shown by start(), which awaits it

const $ = (id) => document.getElementById(id);
const q = new URLSearchParams(location.search);
const PALETTE = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#b07aa1", "#76b7b2"];
const colour = (cellapp) => PALETTE[cellapp % PALETTE.length];
/** Metres across the world view. */
const SPAN = 140;

let layout = [];
let session = null;

async function refreshLayout() {
  try {
    const res = await fetch("layout");
    if (!res.ok) return;
    layout = (await res.json()).cells;
    const apps = new Set(layout.map((c) => c.cellapp)).size;
    $("space").textContent = `${layout.length} cells on ${apps} cellapps`;
  } catch {
    // The next poll tries again.
  }
}

function toast(text) {
  const t = $("toast");
  t.textContent = text;
  t.classList.add("on");
  clearTimeout(toast.timer);
  toast.timer = setTimeout(() => t.classList.remove("on"), 2500);
}

function chatLine(name, text) {
  const div = document.createElement("div");
  div.appendChild(document.createElement("b")).textContent = name;
  div.append(`: ${text}`);
  $("log").appendChild(div);
  $("log").scrollTop = 1e9;
}

function drawWorld(cfg) {
  const c = $("world"), g = c.getContext("2d"), me = session.me, k = c.width / SPAN;
  const sx = (x) => c.width / 2 + (x - me.x) * k, sz = (z) => c.height / 2 + (z - me.z) * k;
  g.clearRect(0, 0, c.width, c.height);
  const mine = session.cell.id;
  for (const cell of layout) {
    const [x0, z0, x1, z1] = cell.rect;
    g.fillStyle = colour(cell.cellapp) + (cell.id === mine ? "33" : "18");
    g.fillRect(sx(x0), sz(z0), (x1 - x0) * k, (z1 - z0) * k);
    g.strokeStyle = colour(cell.cellapp);
    g.setLineDash([6, 4]);
    g.strokeRect(sx(x0), sz(z0), (x1 - x0) * k, (z1 - z0) * k);
  }
  g.setLineDash([]);
  const [bx0, bz0, bx1, bz1] = cfg.bounds;
  g.strokeStyle = "#8b949e";
  g.strokeRect(sx(bx0), sz(bz0), (bx1 - bx0) * k, (bz1 - bz0) * k);
  if (session.target) {
    g.strokeStyle = "#f2c14e";
    g.beginPath();
    g.arc(sx(session.target.x), sz(session.target.z), 5, 0, 2 * Math.PI);
    g.stroke();
  }
  g.font = "11px system-ui, sans-serif";
  g.textAlign = "center";
  for (const e of session.shown) {
    const player = e.type === "Avatar";
    g.fillStyle = player ? "#f2c14e" : "#9fb3c8";
    g.beginPath();
    g.arc(sx(e.x), sz(e.z), player ? 6 : 4, 0, 2 * Math.PI);
    g.fill();
    if (player || Math.hypot(e.x - me.x, e.z - me.z) < 30) g.fillText(e.name, sx(e.x), sz(e.z) - 9);
  }
  g.fillStyle = "#ffffff";
  g.beginPath();
  g.arc(sx(me.x), sz(me.z), 7, 0, 2 * Math.PI);
  g.fill();
  g.fillText(cfg.name, sx(me.x), sz(me.z) - 11);
}

function drawMinimap(cfg) {
  const c = $("minimap"), g = c.getContext("2d"), [bx0, bz0, bx1, bz1] = cfg.bounds;
  const k = c.width / Math.max(bx1 - bx0, bz1 - bz0), sx = (x) => (x - bx0) * k, sz = (z) => (z - bz0) * k;
  g.fillStyle = "#262b31";
  g.fillRect(0, 0, c.width, c.height);
  const mine = session.cell.id;
  for (const cell of layout) {
    const [x0, z0, x1, z1] = cell.rect;
    g.fillStyle = colour(cell.cellapp) + (cell.id === mine ? "cc" : "55");
    g.fillRect(sx(x0) + 1, sz(z0) + 1, (x1 - x0) * k - 2, (z1 - z0) * k - 2);
    g.fillStyle = "#ffffffaa";
    g.font = "10px system-ui, sans-serif";
    g.fillText(`cell ${cell.id} · app ${cell.cellapp}`, sx(x0) + 4, sz(z0) + 12);
  }
  for (const e of session.shown) {
    g.fillStyle = e.type === "Avatar" ? "#f2c14e" : "#dde3ea88";
    g.fillRect(sx(e.x) - 1, sz(e.z) - 1, 2, 2);
  }
  g.fillStyle = "#ffffff";
  g.beginPath();
  g.arc(sx(session.me.x), sz(session.me.z), 3.5, 0, 2 * Math.PI);
  g.fill();
}

function frame(cfg) {
  if (!session.client.closed) {
    drawWorld(cfg);
    drawMinimap(cfg);
  }
  requestAnimationFrame(() => frame(cfg));
}

/** The text under the mini-map, kept up to date also while the tab is in the background (no animation frames). */
function where() {
  const { id, cellapp } = session.cell, me = session.me;
  document.body.dataset.cell = String(id);
  $("where").textContent = `(${me.x.toFixed(0)}, ${me.z.toFixed(0)}) in cell ${id} of cellapp ${cellapp}`;
}

function bindInput() {
  const walkKey = (e) => !e.target.matches?.("input") && ["w", "a", "s", "d"].includes(e.key.toLowerCase());
  addEventListener("keydown", (e) => walkKey(e) && session.keys.add(e.key.toLowerCase()));
  addEventListener("keyup", (e) => session.keys.delete(e.key.toLowerCase()));
  addEventListener("blur", () => session.keys.clear());
  $("world").addEventListener("click", (e) => {
    const c = $("world"), r = c.getBoundingClientRect(), k = c.width / SPAN;
    const x = session.me.x + (e.clientX - r.left - c.width / 2) / k;
    const z = session.me.z + (e.clientY - r.top - c.height / 2) / k;
    session.walkTo(x, z);
  });
  $("say").addEventListener("keydown", (e) => {
    if (e.key !== "Enter") return;
    session.say(e.target.value);
    e.target.value = "";
  });
}

async function start(name) {
  $("login").hidden = true;
  $("main").hidden = false;
  const view = {
    status(state, text) {
      document.body.dataset.state = state;
      $("status").textContent = text;
    },
    chat: (_from, who, text) => chatLine(who, text),
    crossed(from, to, cellapp) {
      toast(`crossed from cell ${from} into cell ${to} (cellapp ${cellapp}): same connection`);
      refreshLayout();
    },
  };
  try {
    view.status("starting", "loading");
    const { play } = await app;
    const cfg = { ...(await (await fetch("config.json")).json()), name };
    const x = Number(q.get("x") ?? NaN), z = Number(q.get("z") ?? NaN);
    // The mini-map is decoration: the login does not wait for it.
    refreshLayout();
    setInterval(refreshLayout, 2000);
    session = await play({
      ...cfg,
      position: Number.isFinite(x) && Number.isFinite(z) ? { x, y: 0, z } : undefined,
    }, view);
    globalThis.demo = session;
    bindInput();
    frame(cfg);
    setInterval(where, 250);
  } catch (e) {
    view.status("failed", `failed: ${e.message}`);
  }
}

$("login").addEventListener("submit", (e) => {
  e.preventDefault();
  const name = $("name").value.trim();
  if (name) start(name);
});
if (q.get("name")) start(q.get("name"));
