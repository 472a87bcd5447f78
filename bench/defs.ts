/**
 * `deno task bench defs`: encode and decode rates of Avatar change records and
 * of the full other-client state, and their sizes beside plain msgpack of the
 * same data, measured in the same run.
 */
import { decode as mpDecode, encode as mpEncode } from "@msgpack/msgpack";
import {
  ByteReader,
  ByteWriter,
  ChangeLog,
  ChangeRecord,
  decodeClientState,
  encodeOtherClientState,
  PropertyContainer,
  readChange,
  writeChangeRecord,
} from "../core/def/mod.ts";
import { AvatarProps, registry } from "../entities/mod.ts";
import { writeResults } from "./results.ts";

const avatar = registry.get("Avatar");

function sampleAvatar(log: ChangeLog | null): PropertyContainer<AvatarProps> {
  const c = new PropertyContainer<AvatarProps>(avatar, "cell", { sink: log });
  const v = c.view;
  v.playerName = "Ayla the Brave";
  v.hp = 87;
  v.level = 23;
  v.emote = "wave";
  for (let i = 0; i < 20; i++) v.inventory.push({ itemId: 1000 + i, count: i + 1, bound: i % 3 === 0 });
  return c;
}

/** A typical tick's worth of changes: top-level scalars, a nested field, a push, a splice. */
function sampleChanges(): ChangeRecord[] {
  const log = new ChangeLog();
  const c = sampleAvatar(null);
  c.sink = log;
  const v = c.view;
  v.hp = 80;
  v.level = 24;
  v.inventory[3].count = 9;
  v.inventory.push({ itemId: 2000, count: 1, bound: false });
  v.inventory.splice(5, 2);
  v.emote = "dance";
  return log.drain().map(({ kind, index, path, value, start, end }) => ({ kind, index, path, value, start, end }));
}

function rate(fn: () => void, minMs: number): number {
  for (let i = 0; i < 200; i++) fn();
  let n = 0;
  const t0 = performance.now();
  let t = t0;
  while (t - t0 < minMs) {
    for (let i = 0; i < 200; i++) fn();
    n += 200;
    t = performance.now();
  }
  return n / ((t - t0) / 1000);
}

function fmt(n: number): string {
  return n >= 1e6 ? `${(n / 1e6).toFixed(2)} M/s` : `${(n / 1e3).toFixed(0)} k/s`;
}

/** Runs the benchmark and writes bench/RESULTS.md. */
export async function run(args: string[]): Promise<void> {
  const ms = Number(args[0] ?? 1500);
  const recs = sampleChanges();
  const w = new ByteWriter(4096);
  const plain = recs.map((r) => [r.index, r.path, r.value, r.start, r.end]);

  w.reset();
  for (const r of recs) writeChangeRecord(w, avatar, r);
  const changeBytes = w.toBytes();
  const changeMsgpack = mpEncode(plain);
  const encChanges = rate(() => {
    w.reset();
    for (const r of recs) writeChangeRecord(w, avatar, r);
  }, ms) * recs.length;
  const decChanges = rate(() => {
    const rd = new ByteReader(changeBytes);
    while (rd.remaining) readChange(rd, avatar);
  }, ms) * recs.length;
  const encChangesMp = rate(() => mpEncode(plain), ms) * recs.length;
  const decChangesMp = rate(() => mpDecode(changeMsgpack), ms) * recs.length;

  const c = sampleAvatar(null);
  const state = encodeOtherClientState(c, 0);
  const stateObj: Record<string, unknown> = {};
  for (const p of avatar.propertiesFor("otherClients")) stateObj[p.name] = c.values[p.index];
  const stateMsgpack = mpEncode(stateObj);
  const target = new PropertyContainer(avatar, "otherClients");
  const encState = rate(() => encodeOtherClientState(c, 0), ms);
  const decState = rate(() => decodeClientState(state, target), ms);
  const encStateMp = rate(() => mpEncode(stateObj), ms);
  const decStateMp = rate(() => mpDecode(stateMsgpack), ms);

  const own = sampleAvatar(null);
  const ownObj: Record<string, unknown> = {};
  for (const p of avatar.propertiesFor("ownClient")) if (own.holds(p)) ownObj[p.name] = own.values[p.index];

  const setRate = rate(() => {
    own.view.hp = own.view.hp === 1 ? 2 : 1;
  }, ms);
  const log = new ChangeLog();
  own.sink = log;
  const nestedRate = rate(() => {
    own.view.inventory[3].count = own.view.inventory[3].count === 1 ? 2 : 1;
    if (log.size > 1000) log.drain();
  }, ms);

  const md = `Avatar (entities/avatar.ts). "Changes" is one tick's ${recs.length} change records
(2 top-level sets, a nested field set, a push, a 2-element splice, a sendLatestOnly string);
"other-client state" is the full state other clients see at the nearest detail level
(playerName, hp, level, emote). msgpack columns encode the same data as plain msgpack
(\`[index, path, value, start, end]\` per change; a \`{name: value}\` map for the state).

| what | compact bytes | msgpack bytes | compact encode | compact decode | msgpack encode | msgpack decode |
| --- | ---: | ---: | ---: | ---: | ---: | ---: |
| ${recs.length} change records | ${changeBytes.length} | ${changeMsgpack.length} | ${fmt(encChanges)} records | ${
    fmt(decChanges)
  } records | ${fmt(encChangesMp)} records | ${fmt(decChangesMp)} records |
| other-client state | ${state.length} | ${stateMsgpack.length} | ${fmt(encState)} | ${fmt(decState)} | ${
    fmt(encStateMp)
  } | ${fmt(decStateMp)} |

Property container, same run: top-level INT32 set with its type check (no sink
attached) ${fmt(setRate)}; nested \`inventory[3].count = n\` through the tracked view into a
ChangeLog ${fmt(nestedRate)}. Own-client state of the sample Avatar: ${
    JSON.stringify(ownObj).length
  } bytes as JSON for reference.`;
  console.log(md);
  await writeResults("defs", md);
}
