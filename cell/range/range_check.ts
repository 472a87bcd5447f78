/**
 * The range list's debug check, for tests: O(nodes + the nodes in every trigger's X and Z strips).
 */
import { ORDER_ENTITY, type RangeNode, type RangeTrigger, type TriggerList } from "./range_node.ts";
import { HEAD, type RangeStore, TAIL } from "./range_store.ts";

function fail(msg: string): never {
  throw new Error(`range list check: ${msg}`);
}

function describe(s: RangeStore, i: number): string {
  const n = s.nodes[i];
  const kind = ["head", "lower", "entity", "upper", "tail"][s.ord[i]];
  const who = n?.entity ? ` ${n.entity.id}` : n?.trigger ? ` of ${n.trigger.owner.entity!.id}` : "";
  return `${kind}${who} (${s.kx[i]}, ${s.kz[i]})`;
}

/** Verifies both lists, their links and order, every trigger's bounds and contents; throws on the first fault. */
export function checkRangeList(
  s: RangeStore,
  list: TriggerList,
  nodes: number,
  entities: number,
  triggers: ReadonlySet<RangeTrigger>,
): void {
  const { kx, kz, ord } = s;
  let ents = 0, circleRefs = 0;
  for (const onX of [true, false]) {
    const key = onX ? kx : kz, prev = onX ? s.px : s.pz, next = onX ? s.nx : s.nz, axis = onX ? "X" : "Z";
    if (prev[HEAD] !== -1 || next[TAIL] !== -1) fail("terminators have outer links");
    let count = 0;
    for (let p = HEAD; p !== TAIL;) {
      const q = next[p];
      if (q < 0 || q >= s.capacity || (q !== TAIL && s.nodes[q] === null)) fail(`${axis} list broken after ${p}`);
      if (prev[q] !== p) fail(`${axis} links broken at ${describe(s, q)}`);
      if (key[q] < key[p] || (key[q] === key[p] && ord[q] < ord[p])) {
        fail(`${axis} unsorted: ${describe(s, p)} before ${describe(s, q)}`);
      }
      if (++count > nodes + 1) fail(`${axis} list has a cycle`);
      p = q;
      if (p === TAIL) break;
      const n = s.nodes[p]!;
      if (n.list !== list || n.idx !== p || n.store !== s) fail(`${describe(s, p)} not marked as on this list`);
      if (onX && n.entity !== null) {
        ents++;
        const e = n.entity;
        if (e.rangeNode !== n || e.x !== kx[p] || e.z !== kz[p]) fail(`entity ${e.id} out of step with its node`);
        circleRefs += n.circles?.length ?? 0;
        for (const t of n.owned ?? []) if (!triggers.has(t)) fail(`entity ${e.id} owns a trigger not on the list`);
      }
    }
    if (count !== nodes + 1) fail(`node count ${nodes}, ${axis} list ${count - 1}`);
  }
  if (ents !== entities) fail(`entity count ${entities}, found ${ents}`);

  let memberRefs = 0;
  for (const t of triggers) {
    const o = t.owner, lo = t.lower.idx, up = t.upper.idx, r = t.radius;
    const name = `trigger of ${o.entity!.id}`;
    if (t.list !== list || t.lower.list !== list || t.upper.list !== list || o.list !== list) fail(`${name} unlinked`);
    if (!o.owned?.includes(t)) fail(`${name} missing from its owner`);
    if (kx[lo] !== o.x - r || kz[lo] !== o.z - r || kx[up] !== o.x + r || kz[up] !== o.z + r) {
      fail(`${name} bounds ${describe(s, lo)} ${describe(s, up)} do not match owner at ${o.x}, ${o.z} radius ${r}`);
    }
    const expected = new Set<RangeNode>();
    for (let p = s.nx[lo]; p !== up; p = s.nx[p]) {
      if (p === TAIL) fail(`${name}: upper bound before lower on X`);
      const n = s.nodes[p]!;
      if (
        ord[p] === ORDER_ENTITY && n !== o && (t.lower.wants & n.makes) !== 0 && kz[p] >= kz[lo] &&
        kz[p] <= kz[up] && (t.filter === null || t.filter(n.entity!))
      ) expected.add(n);
    }
    for (let p = s.nz[lo]; p !== up; p = s.nz[p]) if (p === TAIL) fail(`${name}: upper bound before lower on Z`);
    const held = t.implicit ? list.squareNodes(t) : [...t.members.keys()];
    if (t.implicit && t.members.size > 0) fail(`${name} is implicit but has a member table`);
    for (const m of held) if (!expected.has(m)) fail(`${name} holds ${describe(s, m.idx)}, outside`);
    if (expected.size !== held.length) fail(`${name} holds ${held.length}, expected ${expected.size}`);
    if (t.inCircle === null) continue;
    memberRefs += t.members.size;
    for (const m of t.members.keys()) {
      if (!m.circles?.includes(t)) fail(`${describe(s, m.idx)} does not list the circle ${name}`);
      const dx = m.x - o.x, dz = m.z - o.z;
      if ((dx * dx + dz * dz <= r * r) !== t.inCircle.has(m)) {
        fail(`${name} circle state wrong for ${describe(s, m.idx)}`);
      }
    }
    for (const m of t.inCircle.keys()) if (!t.members.has(m)) fail(`${name} circle holds a non-member`);
  }
  if (memberRefs !== circleRefs) fail(`circle back references ${circleRefs}, circle members ${memberRefs}`);
}
