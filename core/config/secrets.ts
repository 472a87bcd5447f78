/** The rule that a process reachable from other machines runs with a cluster secret and an admin token. */
import { type Config, ConfigError } from "./config.ts";

/** True for addresses only this machine can reach: 127.0.0.0/8, ::1 and localhost. */
export function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, "").toLowerCase();
  return h === "localhost" || h === "::1" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h) || h === "::ffff:127.0.0.1";
}

/**
 * Secure by default: a process that others can reach from other machines
 * proves membership with the cluster secret, and its admin API wants a token.
 * Throws ConfigError when the rule is broken.
 */
export function requireSecrets(c: Config): void {
  if (c.insecure || isLoopbackHost(c.host)) return;
  const why = `--host=${c.host} is reachable from other machines`;
  // The local cluster makes a random secret for its children; a lone role needs the shared one.
  if (c.role !== null && c.secret === null) {
    throw new ConfigError(
      `--secret: ${why}, so processes must prove the cluster secret; set --secret (the same on every process) ` +
        `or pass --insecure to run open`,
    );
  }
  if ((c.role === null || c.role === "cellappmgr") && c.adminToken === null) {
    throw new ConfigError(
      `--admin-token: ${why}, so the admin API needs a bearer token; set --admin-token or pass --insecure to run open`,
    );
  }
}
