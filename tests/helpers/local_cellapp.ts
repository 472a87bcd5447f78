/** A cellapp in the test's own process, joined to a cluster of real processes, for tests that look inside it. */
import { parseCommand } from "../../core/config/mod.ts";
import type { ClusterView, ProcessView } from "../../core/views.ts";
import { CellApp } from "../../cell/mod.ts";
import { cellScripts, registry } from "../../entities/mod.ts";
import { memoryLogger } from "../../testing/log.ts";
import type { LocalCluster } from "./players.ts";
import { api } from "../../testing/procs.ts";

/**
 * Starts a cellapp here that joins `cluster` (with the sample game) and resolves once it is registered, with the
 * cluster's other cellapp as /api/cluster lists it. The caller closes `local`.
 */
export async function localCellApp(cluster: LocalCluster): Promise<{ local: CellApp; other: ProcessView }> {
  const parsed = parseCommand(["--role=cell", `--mgr=${cluster.mgrAddress}`, "--port=0", "--log-level=warn"], {});
  if (parsed.help) throw new Error("unreachable: no --help given");
  const local = new CellApp(parsed.config, memoryLogger(), { registry, scripts: cellScripts });
  try {
    await local.member.link.registered;
    const processes = ((await api(cluster.admin, "/api/cluster")).body as ClusterView).processes;
    const other = processes.find((p) => p.role === "cellapp" && p.id !== local.member.link.id);
    if (!other) throw new Error("the cluster has no cellapp besides the one in this process");
    return { local, other };
  } catch (e) {
    await local.close("test set-up failed");
    throw e;
  }
}
