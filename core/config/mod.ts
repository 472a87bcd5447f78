/**
 * Process configuration: flags, then SEAMLESS_* environment variables, then a JSON file given by --config, then
 * defaults. A bad value anywhere is a ConfigError whose message names the flag (or variable, or file key).
 */
export { type Config, ConfigError, DEFAULT_MGR_PORT, type ServerRole, type TlsMaterial } from "./config.ts";
export { AOI_HYSTERESIS, OFFLOAD_HYSTERESIS } from "./hysteresis.ts";
export { parseCommand, type ParsedCommand } from "./parse_command.ts";
export { isLoopbackHost } from "./secrets.ts";
export { readTls, wireTls } from "./tls.ts";
export { USAGE } from "./usage.ts";
