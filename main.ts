/**
 * The one program of the seamless-world server. `--role` picks what this
 * process is (cellappmgr, cellapp, baseapp); with no role it runs a whole
 * local cluster as child processes. See `--help` and the README.
 */
import { ConfigError, parseCommand, USAGE } from "./core/config.ts";
import { runLocalCluster } from "./cli/local_cluster.ts";
import { runRole, StartError } from "./cli/roles.ts";

async function main(args: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseCommand(args);
  } catch (e) {
    if (e instanceof ConfigError) {
      console.error(`error: ${e.message}`);
      return 2;
    }
    throw e;
  }
  if (parsed.help) {
    console.log(USAGE);
    return 0;
  }
  const cfg = parsed.config;
  try {
    if (cfg.role === null) return await runLocalCluster(cfg);
    await runRole(cfg);
    return 0;
  } catch (e) {
    if (e instanceof StartError) {
      console.error(`error: ${e.message}`);
      return 1;
    }
    throw e;
  }
}

if (import.meta.main) Deno.exit(await main(Deno.args));
