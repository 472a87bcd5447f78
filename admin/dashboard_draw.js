// The dashboard's map: draws a space from the watch socket's messages on a canvas (see dashboard.js).

/** A colour per cellapp, far apart for neighbouring ids. */
export function colorOf(cellapp, alpha = 1) {
  const hue = (cellapp * 137.508) % 360;
  return `hsla(${hue}, 70%, 60%, ${alpha})`;
}

/** The canvas transform of a space with `bounds`: world (x, z) to canvas pixels, z up, and back. */
export function worldView(bounds, canvas) {
  const [minX, minZ, maxX, maxZ] = bounds;
  const pad = 12;
  const scale = (canvas.width - 2 * pad) / Math.max(maxX - minX, maxZ - minZ);
  return {
    x: (x) => pad + (Math.min(maxX, Math.max(minX, x)) - minX) * scale,
    y: (z) => canvas.height - pad - (Math.min(maxZ, Math.max(minZ, z)) - minZ) * scale,
    world: (px, py) => [minX + (px - pad) / scale, minZ + (canvas.height - pad - py) / scale],
  };
}

/**
 * Draws the state's space on the canvas: cells coloured by cellapp with their figures, entities as dots (or counts per
 * square), ghosts as rings, the watched entity and a spawn point. Returns what it drew.
 */
export function drawSpace(canvas, state) {
  const ctx = canvas.getContext("2d");
  ctx.clearRect(0, 0, canvas.width, canvas.height);
  const g = state.geometry;
  const drawn = { space: state.spaceId, cells: 0, entities: 0, ghosts: 0, points: [] };
  if (!g) return drawn;
  const v = worldView(g.bounds, canvas);
  const loads = new Map((state.load?.cells ?? []).map((c) => [c.id, c]));
  const retiring = new Set(g.balance.retiring);
  for (const c of g.cells) {
    const [x0, z0, x1, z1] = c.rect;
    const px = v.x(x0), py = v.y(z1), w = v.x(x1) - px, h = v.y(z0) - py;
    ctx.fillStyle = colorOf(c.cellapp, 0.14);
    ctx.fillRect(px, py, w, h);
    ctx.strokeStyle = colorOf(c.cellapp, 0.9);
    ctx.lineWidth = 2;
    ctx.setLineDash(retiring.has(c.id) ? [6, 4] : []);
    ctx.strokeRect(px + 1, py + 1, w - 2, h - 2);
    ctx.setLineDash([]);
    const l = loads.get(c.id);
    ctx.fillStyle = colorOf(c.cellapp, 1);
    ctx.font = "13px system-ui, sans-serif";
    const label = `cell ${c.id} · app ${c.cellapp}` +
      (l ? ` · ${Math.round(l.load * 100)}% · ${l.reals} reals · ${l.ghosts} ghosts` : "");
    if (w > 60 && h > 20) ctx.fillText(label, px + 6, py + 16, w - 12);
    if (l && w > 60 && h > 36) {
      ctx.fillStyle = "rgba(216, 222, 230, 0.6)";
      ctx.fillText(`offloads ${l.offloadsIn} in · ${l.offloadsOut} out · ${l.tickRate} Hz`, px + 6, py + 32, w - 12);
    }
    drawn.cells++;
  }
  const e = state.entities;
  if (e) {
    for (const c of e.cells) {
      if (c.grid) {
        const { rect, cols, rows, counts } = c.grid;
        const max = Math.max(1, ...counts);
        const cw = (rect[2] - rect[0]) / cols, ch = (rect[3] - rect[1]) / rows;
        for (let i = 0; i < counts.length; i++) {
          if (!counts[i]) continue;
          const wx = rect[0] + (i % cols) * cw, wz = rect[1] + Math.floor(i / cols) * ch;
          ctx.fillStyle = colorOf(c.cellapp, 0.15 + 0.8 * counts[i] / max);
          ctx.fillRect(v.x(wx), v.y(wz + ch), v.x(wx + cw) - v.x(wx), v.y(wz) - v.y(wz + ch));
        }
        drawn.entities += c.count;
        continue;
      }
      ctx.fillStyle = "#f4f7fb";
      for (const [id, x, z] of c.points) {
        const px = v.x(x), py = v.y(z);
        ctx.fillRect(px - 2, py - 2, 4, 4);
        drawn.points.push([id, px, py]);
      }
      drawn.entities += c.points.length;
    }
    const cellapps = new Map(g.cells.map((c) => [c.id, c.cellapp]));
    for (const [, x, z, cellId] of e.ghosts) {
      ctx.strokeStyle = colorOf(cellapps.get(cellId) ?? 0, 0.9);
      ctx.lineWidth = 1;
      ctx.beginPath();
      ctx.arc(v.x(x), v.y(z), 4, 0, 2 * Math.PI);
      ctx.stroke();
    }
    drawn.ghosts = e.ghostCount;
  }
  const sel = drawn.points.find((p) => p[0] === state.entityId);
  if (sel) {
    ctx.strokeStyle = "#ffd84d";
    ctx.lineWidth = 2;
    ctx.beginPath();
    ctx.arc(sel[1], sel[2], 9, 0, 2 * Math.PI);
    ctx.stroke();
  }
  if (state.spawnAt) {
    ctx.strokeStyle = "#5fb3ff";
    ctx.strokeRect(v.x(state.spawnAt[0]) - 6, v.y(state.spawnAt[1]) - 6, 12, 12);
  }
  return drawn;
}
