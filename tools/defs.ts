/**
 * `deno task defs DIR`: loads entity definitions and prints them as one JSON
 * object. DIR is an entities.xml beside an entity_defs/ folder (user types for
 * USER_TYPE come from DIR/user_types.ts when present, as `export const
 * userTypes`), or a TypeScript module or folder (mod.ts) exporting `registry`.
 * Warnings go to stderr; a bad definition exits 1 with file:line and what is wrong.
 */
import { DefError, describeRegistry, EntityRegistry, formatWarning, loadDefs, UserTypeImpl } from "../core/def/mod.ts";

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

if (import.meta.main) {
  const target = Deno.args[0];
  if (!target) {
    console.error("usage: deno task defs DIR   (DIR/entities.xml + DIR/entity_defs/, or a TypeScript registry)");
    Deno.exit(2);
  }
  try {
    const reg = await loadRegistry(target);
    for (const w of reg.warnings) console.error(`warning: ${formatWarning(w)}`);
    console.log(JSON.stringify(describeRegistry(reg), null, 2));
  } catch (e) {
    console.error(`error: ${e instanceof DefError || e instanceof Error ? e.message : String(e)}`);
    Deno.exit(1);
  }
}
