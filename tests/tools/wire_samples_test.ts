/**
 * The wire fuzzer knows every message: each kind declared in the catalog has a sample (tools/fuzz/wire_inputs.ts)
 * or a reason in NOT_SAMPLED, each sample reaches the role that serves it from a role that may send it, and the
 * samples pass their message's check (so that their benign form gets past it to the handler).
 */
import assert from "node:assert/strict";
import {
  BaseScriptMsg,
  CellMsg,
  MAX_KIND,
  messageByKind,
  type MessageDef,
  MgrMsg,
  ProcMsg,
  ROLES,
} from "../../core/wire/mod.ts";
import { NOT_SAMPLED, sampledKinds, samplesFor, SERVED_BY } from "../../tools/fuzz/wire_inputs.ts";
import { rng } from "../../tools/fuzz/random.ts";

/** Every declared message kind (the catalog fills as the interfaces load, which core/wire/mod.ts does). */
function declared(): MessageDef[] {
  const out: MessageDef[] = [];
  for (let k = 1; k <= MAX_KIND; k++) {
    const def = messageByKind(k);
    if (def) out.push(def);
  }
  return out;
}

Deno.test("every declared message kind has a fuzz sample or a reason why not", () => {
  const sampled = sampledKinds();
  const missing = declared().filter((d) => !sampled.has(d.kind) && !NOT_SAMPLED.has(d)).map((d) => d.name);
  assert.deepEqual(missing, [], "give these a sample in tools/fuzz/wire_inputs.ts (or a reason in NOT_SAMPLED)");
  const both = declared().filter((d) => sampled.has(d.kind) && NOT_SAMPLED.has(d)).map((d) => d.name);
  assert.deepEqual(both, [], "sampled, yet listed as not sampled");
});

Deno.test("the newest messages and fields are sampled", () => {
  const sampled = sampledKinds();
  for (
    const d of [MgrMsg.placeCellEntity, BaseScriptMsg.cellTeleport, BaseScriptMsg.clientMessage, ProcMsg.reloadGame]
  ) {
    assert.ok(sampled.has(d.kind), `${d.name} has a sample`);
  }
  // Drawn many times, the samples carry each new optional field.
  const r = rng(7);
  const seen = new Set<string>();
  const walk = (v: unknown): void => {
    if (v === null || typeof v !== "object" || v instanceof Uint8Array) return;
    for (const [k, x] of Object.entries(v)) {
      seen.add(k);
      walk(x);
    }
  };
  for (const role of ROLES) {
    for (const target of ROLES) {
      for (const [, make] of samplesFor(role, target)) {
        for (let i = 0; i < 50; i++) walk(make(r, { self: "127.0.0.1:1", target: "127.0.0.1:2", role }));
      }
    }
  }
  for (const field of ["navGeometry", "shutDownWhenEmpty", "answersOwed", "geometry", "newSpace"]) {
    assert.ok(seen.has(field), `some sample carries ${field}`);
  }
});

Deno.test("each sample goes to the roles that serve it, from a role that may send it, and passes its check", () => {
  const r = rng(11);
  for (const def of declared().filter((d) => sampledKinds().has(d.kind))) {
    const servers = SERVED_BY.get(def) ?? ROLES;
    const routes = ROLES.flatMap((from) =>
      servers.map((to) => ({ from, to, s: samplesFor(from, to).find(([d]) => d === def) }))
    ).filter((x) => x.s !== undefined);
    assert.ok(routes.length > 0, `${def.name} reaches no role that serves it`);
    for (const { from, to, s } of routes) {
      assert.ok(def.from.includes(from) && servers.includes(to), `${def.name}: ${from} → ${to}`);
      for (let i = 0; i < 30; i++) {
        const args = s![1](r, { self: "127.0.0.1:1", target: "127.0.0.1:2", role: from });
        assert.equal(def.check(args), null, `${def.name}'s sample passes its check: ${Deno.inspect(args)}`);
      }
    }
  }
  // Served by the roles that handle them (cell/base_calls.ts, base/baseapp_handlers.ts, cli/roles.ts).
  assert.deepEqual(SERVED_BY.get(BaseScriptMsg.cellTeleport), ["cellapp"]);
  assert.deepEqual(SERVED_BY.get(BaseScriptMsg.clientMessage), ["baseapp"]);
  assert.deepEqual(SERVED_BY.get(ProcMsg.reloadGame), ["cellapp", "baseapp"]);
  assert.ok(samplesFor("cellappmgr", "cellapp").some(([d]) => d === CellMsg.createCell));
});
