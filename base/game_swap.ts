/**
 * A baseapp's part of a game reload (docs/game.md#reloading-a-game): its registry adopts the new definitions in
 * place, every base follows them (new properties with their defaults), every base script takes its type's new
 * class with its state kept, and every client online is sent the new definitions (S2C.definitions).
 */
import { describeRegistry, type EntityRegistry } from "../core/def/mod.ts";
import { S2C, type ServerMessage } from "../core/proto/mod.ts";
import type { BaseScript, BaseScripts } from "../core/base_script.ts";
import type { PropertyContainer } from "../core/def/mod.ts";
import type { BaseScriptRuntime, ScriptedBase } from "./entity/scripts.ts";
import type { PlacementHook } from "../core/placement.ts";
import type { LoginCheck } from "./login/mod.ts";

/** A base as a reload changes it: its containers and its script. */
export interface SwappedBase extends ScriptedBase {
  readonly base: PropertyContainer;
  readonly cellProps: PropertyContainer;
}

/** The game's hooks a baseapp runs at each login: they follow a reload. */
export interface BaseGameHooks {
  /** The game's own login check (core/game.ts LoginHook); null: none. */
  checkLogin: LoginCheck | null;
  /** Where a login goes (core/placement.ts). */
  placement: PlacementHook;
}

/** What a reload changes on a baseapp. */
export interface BaseGameHost {
  readonly registry: EntityRegistry;
  readonly scripts: BaseScriptRuntime;
  readonly proxies: ReadonlyMap<number, SwappedBase>;
  readonly sessions: Iterable<{ readonly state: string; sendMessage(m: ServerMessage): void }>;
}

/** Swaps `registry` and `scripts` into `host`'s bases and tells its clients, naming the game `version`. */
export function swapBaseGame(host: BaseGameHost, registry: EntityRegistry, scripts: BaseScripts, version: string) {
  host.registry.adopt(registry);
  host.scripts.scripts = scripts;
  for (const p of host.proxies.values()) {
    p.base.upgrade();
    p.cellProps.upgrade();
    const cls = scripts[p.type.name];
    const self = p as { script: BaseScript | null };
    if (!cls) self.script = null;
    else if (p.script) Object.setPrototypeOf(p.script, cls.prototype);
    else self.script = host.scripts.make(p);
  }
  const m: ServerMessage = { id: S2C.definitions, version, registry: JSON.stringify(describeRegistry(host.registry)) };
  for (const s of host.sessions) if (s.state === "online") s.sendMessage(m);
}
