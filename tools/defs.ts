/**
 * `deno task defs DIR`: loads entity definitions and prints them as one JSON
 * object. DIR is an entities.xml beside an entity_defs/ folder (user types for
 * USER_TYPE come from DIR/user_types.ts when present, as `export const
 * userTypes`), or a TypeScript module or folder (mod.ts) exporting `registry`.
 * Warnings go to stderr; a bad definition exits 1 with file:line and what is wrong.
 * `deno task defs --ts [DIR] [--out=FILE]` writes TypeScript types for client code instead (tools/defs_ts.ts).
 */
import { errorText } from "../core/errors.ts";
import { describeRegistry, EntityRegistry, formatWarning, loadDefs, UserTypeImpl } from "../core/def/mod.ts";
import { parseArgs } from "node:util";
import { dirname, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { registryToTs } from "./defs_ts.ts";

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.stat(path);
    return true;
  } catch {
    return false;
  }
}

function url(path: string): string {
  return new URL(path, `file://${Deno.cwd()}/`).href;
}

/** Loads a registry from a .def folder or a TypeScript module/folder. */
export async function loadRegistry(target: string): Promise<EntityRegistry> {
  const dir = target.replace(/\/+$/, "");
  if (await exists(`${dir}/entities.xml`)) {
    let userTypes: Record<string, UserTypeImpl> = {};
    if (await exists(`${dir}/user_types.ts`)) {
      userTypes = (await import(url(`${dir}/user_types.ts`))).userTypes ?? {};
    }
    return await loadDefs(dir, { userTypes });
  }
  const module = dir.endsWith(".ts") ? dir : `${dir}/mod.ts`;
  if (!(await exists(module))) {
    throw new Error(`${target}: neither an entities.xml folder nor a TypeScript registry (no ${module})`);
  }
  const mod = await import(url(module));
  if (!(mod.registry instanceof EntityRegistry)) {
    throw new Error(`${module} does not export \`registry\` (an EntityRegistry)`);
  }
  return mod.registry;
}

/** The SDK's entry module, as a specifier from `fromDir` (relative, so the output works wherever the tree is). */
function sdkFrom(fromDir: string): string {
  const rel = relative(resolve(fromDir), fileURLToPath(new URL("../client/mod.ts", import.meta.url)));
  return rel.startsWith(".") ? rel : `./${rel}`;
}

const USAGE = "usage: deno task defs DIR   (DIR/entities.xml + DIR/entity_defs/, or a TypeScript registry)\n" +
  "       deno task defs --ts [DIR] [--out=FILE] [--sdk=SPECIFIER]   (TypeScript types for client code; DIR " +
  "defaults to entities/, the SDK is imported relative to FILE, or to the current folder)";

if (import.meta.main) {
  const { values, positionals } = parseArgs({
    args: Deno.args,
    options: { ts: { type: "boolean" }, out: { type: "string" }, sdk: { type: "string" } },
    allowPositionals: true,
  });
  const target = positionals[0] ?? (values.ts ? fileURLToPath(new URL("../entities", import.meta.url)) : undefined);
  if (!target || positionals.length > 1) {
    console.error(USAGE);
    Deno.exit(2);
  }
  try {
    const reg = await loadRegistry(target);
    for (const w of reg.warnings) console.error(`warning: ${formatWarning(w)}`);
    if (values.ts) {
      const sdk = values.sdk ?? sdkFrom(values.out ? dirname(values.out) : ".");
      const text = registryToTs(reg, sdk, relative(Deno.cwd(), resolve(target)) || ".");
      if (values.out) await Deno.writeTextFile(values.out, text);
      else console.log(text);
      Deno.exit(0);
    }
    console.log(JSON.stringify(describeRegistry(reg), null, 2));
  } catch (e) {
    console.error(`error: ${errorText(e)}`);
    Deno.exit(1);
  }
}
