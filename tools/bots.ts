/**
 * `deno task bots --admin URL --count N --duration S [--space ID] [--side M] [--speed 5] [--move-hz 10]
 * [--prop-every 5] [--warmup 5] [--json]`: runs N bot clients against the cluster behind an admin API and prints
 * what they saw (one JSON object with --json). The defaults are the scenario other servers are measured with.
 *
 * This entry point loads the game's entity definitions (entities/), as a game client ships them; the SDK itself
 * (client/mod.ts) takes the registry as a parameter.
 */
import { errorText } from "../core/errors.ts";
import { parseArgs } from "node:util";
import { registry } from "../entities/mod.ts";
import { type BotReport, runBots } from "../client/bots/mod.ts";

const USAGE = `Usage: deno task bots --admin URL --count N --duration S [options]

  --admin URL        admin API of the cellappmgr, e.g. http://127.0.0.1:8080 (required)
  --admin-token T    the cellappmgr's admin token [SEAMLESS_ADMIN_TOKEN, else none]
  --count N          bots to run, 1-5000 (required)
  --duration S       seconds to measure after the warm-up, 1-3600 (required)
  --space ID         space to enter [1]
  --side M           side of the square the bots spawn and walk in, metres [the space's bounds]
                     (bots ask for a space and a spawn point; baseapps grant that with
                     --client-spawn, else the bots walk from where the server put them)
  --speed V          walking speed, m/s [5]
  --move-hz H        position updates per second [10]
  --prop-every S     seconds between counter raises [5]
  --warmup S         seconds before measuring [5]
  --observers N      only N bots (spread over the login order) watch what they see and measure
                     latency, as first sightings; the rest count bytes (and answer the server as a
                     player's client does, so they get the same traffic, but step over moves unread)
                     [every bot watches]
  --walk MODE        wander, or peer: the Colyseus peer harness's walk and send groups [wander]
  --json             print only the JSON report on stdout
`;

function num(name: string, v: string | undefined, min: number, max: number, dflt?: number): number {
  if (v === undefined) {
    if (dflt === undefined) throw new Error(`--${name} is required`);
    return dflt;
  }
  const n = Number(v);
  if (!Number.isFinite(n) || n < min || n > max) {
    throw new Error(`--${name}: ${JSON.stringify(v)} is not in ${min}-${max}`);
  }
  return n;
}

function walkMode(v: string | undefined): "wander" | "peer" {
  if (v === undefined || v === "wander" || v === "peer") return v ?? "wander";
  throw new Error(`--walk: ${JSON.stringify(v)} is not wander or peer`);
}

/** Parses the flags, runs the bots and prints the report. */
export async function main(args: string[]): Promise<BotReport> {
  const { values } = parseArgs({
    args,
    strict: true,
    options: {
      admin: { type: "string" },
      "admin-token": { type: "string" },
      count: { type: "string" },
      duration: { type: "string" },
      space: { type: "string" },
      side: { type: "string" },
      speed: { type: "string" },
      "move-hz": { type: "string" },
      "prop-every": { type: "string" },
      warmup: { type: "string" },
      observers: { type: "string" },
      walk: { type: "string" },
      json: { type: "boolean" },
      help: { type: "boolean" },
    },
  });
  if (values.help) {
    console.log(USAGE);
    Deno.exit(0);
  }
  if (!values.admin) throw new Error("--admin is required (the cellappmgr's admin API URL)");
  const report = await runBots({
    admin: values.admin,
    adminToken: values["admin-token"] ?? Deno.env.get("SEAMLESS_ADMIN_TOKEN"),
    count: num("count", values.count, 1, 5000),
    duration: num("duration", values.duration, 1, 3600),
    space: num("space", values.space, 1, 2 ** 32 - 1, 1),
    side: values.side === undefined ? undefined : num("side", values.side, 1, 1e6),
    speed: num("speed", values.speed, 0, 1000, 5),
    moveHz: num("move-hz", values["move-hz"], 0.1, 100, 10),
    propEvery: num("prop-every", values["prop-every"], 0.1, 3600, 5),
    warmup: num("warmup", values.warmup, 0, 3600, 5),
    observers: values.observers === undefined ? undefined : num("observers", values.observers, 0, 5000),
    walk: walkMode(values.walk),
    registry,
    log: (line) => console.error(line),
  });
  console.log(values.json ? JSON.stringify(report) : JSON.stringify(report, null, 2));
  return report;
}

if (import.meta.main) {
  try {
    await main(Deno.args);
    Deno.exit(0);
  } catch (e) {
    console.error(`bots: ${errorText(e)}\n\n${USAGE}`);
    Deno.exit(2);
  }
}
