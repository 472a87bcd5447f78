/**
 * Reading the command line: flags, then SEAMLESS_* environment variables, then a JSON file given by --config, then
 * defaults. A bad value anywhere is a ConfigError whose message names the flag (or variable, or file key).
 */
import { errorText } from "../errors.ts";
import { parseArgs } from "node:util";
import { type Config, ConfigError } from "./config.ts";
import { camel, readConfigFile } from "./config_file.ts";
import { withDefaults } from "./defaults.ts";
import { KEY_OF, SPECS } from "./flags.ts";
import { requireSecrets } from "./secrets.ts";
import { readTls } from "./tls.ts";

/** The result of reading the command line: a config, or a request for help. */
export type ParsedCommand = { help: true } | {
  help: false;
  config: Config;
  /** The flags set, by flag name without --, from the command line, the environment or the config file. */
  given: ReadonlySet<string>;
};

/**
 * Reads flags, environment and config file into a Config. Throws ConfigError
 * naming the offending flag, variable or key.
 */
export function parseCommand(
  args: string[],
  env: Record<string, string | undefined> = Deno.env.toObject(),
  readFile: (path: string) => string = Deno.readTextFileSync,
): ParsedCommand {
  const options: Record<string, { type: "string" | "boolean" }> = {
    config: { type: "string" },
    help: { type: "boolean" },
  };
  for (const [name, spec] of Object.entries(SPECS)) options[name] = { type: spec.flag ? "boolean" : "string" };
  let values: Record<string, string | boolean | undefined>;
  try {
    values = parseArgs({ args, options, strict: true, allowPositionals: false })
      .values;
  } catch (e) {
    throw new ConfigError(describeParseError(e as Error), { cause: e });
  }
  if (values.help) return { help: true };

  const chosen = new Map<string, { raw: unknown; source: string }>();
  const configPath = (values.config as string | undefined) ??
    env.SEAMLESS_CONFIG;
  if (configPath !== undefined) {
    const source = values.config !== undefined ? "--config" : "SEAMLESS_CONFIG";
    for (
      const [key, raw] of Object.entries(
        readConfigFile(configPath, source, readFile),
      )
    ) {
      chosen.set(key, { raw, source: `${configPath}: "${camel(key)}"` });
    }
  }
  for (const [name, spec] of Object.entries(SPECS)) {
    const e = env[spec.env];
    if (e !== undefined) chosen.set(name, { raw: e, source: spec.env });
    const f = values[name];
    if (typeof f === "string" || typeof f === "boolean") {
      chosen.set(name, { raw: f, source: `--${name}` });
    }
  }

  const db = chosen.get("db"), kv = chosen.get("kv");
  if (db && kv) {
    throw new ConfigError(
      `${db.source} and ${kv.source} are both set: use PostgreSQL (--db) or Deno KV (--kv), not both`,
    );
  }

  const got: Partial<Record<keyof Config, unknown>> = {};
  for (const [name, { raw, source }] of chosen) {
    try {
      got[KEY_OF[name]] = SPECS[name].parse(raw);
    } catch (e) {
      throw new ConfigError(`${source}: ${errorText(e)}`, { cause: e });
    }
  }
  const config = withDefaults(got);
  requireSecrets(config);
  config.tls = readTls(config, readFile);
  return { help: false, config, given: new Set(chosen.keys()) };
}

function describeParseError(e: Error): string {
  const m = /'([^']*)'/.exec(e.message);
  const code = (e as { code?: string }).code;
  if (code === "ERR_PARSE_ARGS_UNKNOWN_OPTION" && m) {
    return `${m[1].split("=")[0]}: unknown flag (see --help)`;
  }
  if (code === "ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL" && m) {
    return `${m[1]}: unexpected argument; flags look like --name=value`;
  }
  if (code === "ERR_PARSE_ARGS_INVALID_OPTION_VALUE" && m) {
    return `${m[1].split(" ")[0]}: ${e.message}`;
  }
  return e.message;
}
