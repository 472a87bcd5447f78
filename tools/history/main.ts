/**
 * Checks the claim logs of a run from the command line (after a benchmark or a manual run with --history=DIR):
 *
 *   deno run -A tools/history/main.ts DIR [--before=MS --after=MS] [--kill=PID@MS ...] [--tolerance=MS]
 *
 * --before/--after: wall-clock ms around a fault for the loss check; --kill: a process killed -9 at that time;
 * --tolerance: how long two reals (or two bases of an account) may overlap. Prints the report; exits 1 when it
 * found an overlap or a loss, 2 on bad arguments or an unreadable log.
 */
import { errorText } from "../../core/errors.ts";
import { parseArgs } from "node:util";
import { checkHistory, type CheckOptions, formatReport, readHistory } from "./mod.ts";

/** Runs the check on `args`; resolves with the exit status. */
export async function main(args: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args,
      allowPositionals: true,
      options: {
        before: { type: "string" },
        after: { type: "string" },
        kill: { type: "string", multiple: true },
        tolerance: { type: "string" },
      },
    });
  } catch (e) {
    console.error(`error: ${errorText(e)}`);
    return 2;
  }
  const { values, positionals } = parsed;
  const num = (name: string, v: string | undefined): number | undefined => {
    if (v === undefined) return undefined;
    const n = Number(v);
    if (!Number.isFinite(n)) throw new Error(`--${name}: ${JSON.stringify(v)} is not a number of ms`);
    return n;
  };
  try {
    if (positionals.length !== 1) throw new Error("give one folder of claim logs (--history=DIR)");
    const opts: CheckOptions = {};
    const tolerance = num("tolerance", values.tolerance);
    if (tolerance !== undefined) opts.realToleranceMs = opts.baseToleranceMs = tolerance;
    const before = num("before", values.before), after = num("after", values.after);
    if ((before === undefined) !== (after === undefined)) throw new Error("--before and --after go together");
    if (before !== undefined && after !== undefined) opts.loss = { before, after };
    const kills: Record<number, number> = {};
    for (const k of values.kill ?? []) {
      const m = /^(\d+)@(\d+(?:\.\d+)?)$/.exec(k);
      if (!m) throw new Error(`--kill: ${JSON.stringify(k)} is not PID@MS`);
      kills[Number(m[1])] = Number(m[2]);
    }
    opts.kills = kills;
    const report = checkHistory(await readHistory(positionals[0]), opts);
    console.log(formatReport(report));
    return report.overlaps.length + report.lost.length > 0 ? 1 : 0;
  } catch (e) {
    console.error(`error: ${errorText(e)}`);
    return 2;
  }
}

if (import.meta.main) Deno.exit(await main(Deno.args));
