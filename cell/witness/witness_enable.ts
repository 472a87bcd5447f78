/** A client enabled entities: its entity gets a fresh witness, which first tells it its own properties. */
import { ByteWriter, writeChange } from "../../core/def/mod.ts";
import type { Entity } from "../entity.ts";
import { Witness, witnessOf } from "./witness.ts";
import type { WitnessOptions } from "./witness_options.ts";

/** Gives `e` a witness that writes its client's updates to `sink` each tick, in place of any it had. */
export function enableWitness(e: Entity, sink: (frame: Uint8Array) => void, opts: WitnessOptions = {}): Witness {
  // The base asks for a witness only for a client that has none here: one still here served a client that is
  // gone without a word (its baseapp died), and the client now attached knows nothing of what that one saw.
  witnessOf(e)?.destroy();
  const w = new Witness(e, opts, sink);
  // The client knows only what its base sent at login: give it its own cell properties first.
  const bw = new ByteWriter(64);
  for (const p of e.type.propertiesFor("ownClient")) {
    if (!e.container.holds(p)) continue;
    writeChange(bw.reset(), p, [], e.container.values[p.index], -1, -1, "client");
    w.ownChange(bw.toBytes());
  }
  return w;
}
