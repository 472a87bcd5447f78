/**
 * The one program of the seamless-world server. `--role` picks what this
 * process is (cellappmgr, cellapp, baseapp); with no role it runs a whole
 * local cluster as child processes. `--game` names the game module (the
 * sample game in entities/ without it). See `--help` and the README.
 */
import { runMain } from "./cli/run.ts";

if (import.meta.main) Deno.exit(await runMain(Deno.args));
