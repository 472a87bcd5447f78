/** Reading a --config JSON file, whose keys are the flags' names in camelCase. */
import { errorText } from "../errors.ts";
import { ConfigError } from "./config.ts";
import { SPECS } from "./flags.ts";

/** The config-file key of a flag: admin-port becomes adminPort. */
export function camel(flag: string): string {
  return flag.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
}

/**
 * Reads a config file into raw values keyed by flag name (numbers as text, as a flag would give them). Throws
 * ConfigError naming `source` (--config or SEAMLESS_CONFIG) for an unreadable file or an unknown key.
 */
export function readConfigFile(
  path: string,
  source: string,
  readFile: (p: string) => string,
): Record<string, unknown> {
  let raw: unknown;
  try {
    raw = JSON.parse(readFile(path));
  } catch (e) {
    throw new ConfigError(
      `${source}: cannot read ${path} as JSON: ${errorText(e)}`,
      { cause: e },
    );
  }
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    throw new ConfigError(`${source}: ${path} must hold a JSON object`);
  }
  const out: Record<string, unknown> = {};
  const byCamel = new Map(Object.keys(SPECS).map((k) => [camel(k), k]));
  for (const [key, value] of Object.entries(raw)) {
    const name = byCamel.get(key);
    if (!name) {
      throw new ConfigError(
        `${source}: ${path}: unknown key "${key}"; known keys: ${[...byCamel.keys()].join(", ")}`,
      );
    }
    out[name] = typeof value === "number" ? String(value) : value;
  }
  return out;
}
