/**
 * A game written to a folder of its own in two files (defs.ts, mod.ts), in versions that differ the way a game
 * reload may or may not take (docs/game.md#reloading-a-game): the game reload tests write one version, start a
 * cluster on it, then write another and reload.
 */
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const FRAMEWORK = pathToFileURL(new URL("../../mod.ts", import.meta.url).pathname).href;

/** How a version of the game differs from the first. */
export interface ReloadableVersion {
  /** What `poke` adds to `score` (1 in the first version), and the number the base's `greet` writes. */
  step?: number;
  /**
   * Adds `mood` (STRING, ALL_CLIENTS, default "calm") after the existing properties, and the exposed cell method
   * `cheer` that sets it to "glad".
   */
  mood?: boolean;
  /** `score` becomes a FLOAT32: a retyped persistent property. */
  retype?: boolean;
  /** `poke` takes an argument: a changed signature of a method clients call. */
  pokeArg?: boolean;
  /** mod.ts throws on load, at a line of its own. */
  throws?: boolean;
  /** mod.ts takes this many ms to load (a top-level await): a reload that lasts while players move. */
  slowMs?: number;
  /** The game's login check refuses this account name ("no NAME here"). */
  refuse?: string;
  /** Adds a second entity type, `Pebble` (a cell part, nothing else), after Avatar. */
  pebble?: boolean;
}

/** Writes version `v` of the game into `dir` (defs.ts, mod.ts); returns the path of mod.ts. */
export async function writeReloadable(dir: string, v: ReloadableVersion = {}): Promise<string> {
  await Deno.mkdir(dir, { recursive: true });
  const defs = `import { defineEntity, T } from "${FRAMEWORK}";

export const Avatar = defineEntity({
  name: "Avatar",
  proxy: true,
  hasBase: true,
  hasCell: true,
  hasClient: true,
  volatile: { position: true, yaw: true },
  properties: {
    score: { type: T.${v.retype ? "FLOAT32" : "INT32"}, flags: "ALL_CLIENTS", persistent: true },
    greeting: { type: T.STRING, flags: "BASE_AND_CLIENT" },${
    v.mood ? `\n    mood: { type: T.STRING, flags: "ALL_CLIENTS", default: "calm" },` : ""
  }
  },
  cellMethods: {
    poke: { args: [${v.pokeArg ? "T.INT32" : ""}], exposed: true },${
    v.mood ? `\n    cheer: { args: [], exposed: true },` : ""
  }
  },
  baseMethods: {
    greet: { args: [], exposed: true },
  },
});
${v.pebble ? `\nexport const Pebble = defineEntity({ name: "Pebble", hasCell: true, properties: {} });\n` : ""}`;
  const mod = `import { BaseScript, CellScript, createRegistry, defineGame } from "${FRAMEWORK}";
import { Avatar${v.pebble ? ", Pebble" : ""} } from "./defs.ts";
${v.throws ? `\nthrow new Error("this version of the game is broken");\n` : ""}${
    v.slowMs ? `await new Promise((r) => setTimeout(r, ${v.slowMs}));\n` : ""
  }
class AvatarCell extends CellScript<{ score: number; mood: string }> {
  poke(caller: number): void {
    if (caller === this.self.id) this.self.props.score += ${v.step ?? 1};
  }
${
    v.mood
      ? `\n  cheer(caller: number): void {\n    if (caller === this.self.id) this.self.props.mood = "glad";\n  }\n`
      : ""
  }}

class AvatarBase extends BaseScript<{ greeting: string }> {
  greet(): void {
    this.self.props.greeting = "hello ${v.step ?? 1}";
  }
}

export const registry = createRegistry({ entities: [Avatar${v.pebble ? ", Pebble" : ""}] });
export const game = defineGame({ name: "reloadable", registry, cellScripts: { Avatar: AvatarCell },
  baseScripts: { Avatar: AvatarBase },${
    v.refuse ? `\n  checkLogin: (a) => a.name === ${JSON.stringify(v.refuse)} ? "no ${v.refuse} here" : null,` : ""
  }
});
`;
  await Deno.writeTextFile(join(dir, "defs.ts"), defs);
  await Deno.writeTextFile(join(dir, "mod.ts"), mod);
  return join(dir, "mod.ts");
}
