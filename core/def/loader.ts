/**
 * Loads BigWorld/KBEngine definitions: DIR/entities.xml, DIR/entity_defs/*.def,
 * entity_defs/interfaces/ and components/, and entity_defs/types.xml or alias.xml.
 */
import { createRegistry } from "./build.ts";
import { BUILTIN_TYPES, TYPE_ALIASES } from "./builtins.ts";
import { UserTypeImpl } from "./compound.ts";
import { DefContext, DefError, DefWarning } from "./errors.ts";
import { EntityRegistry } from "./model.ts";
import { ComponentSpec, EntitySpec } from "./schema.ts";
import { TypeTable } from "./type_table.ts";
import { DataType } from "./types.ts";
import { parseDefSpec } from "./def_file.ts";
import { parseXml, XmlElement } from "./xml.ts";
import { parseBool, parseTypeElement, TypeEnv } from "./xml_types.ts";

/** Options of a load. */
export interface LoadOptions {
  /** User types that USER_TYPE <implementedBy> names resolve to. */
  readonly userTypes?: Readonly<Record<string, UserTypeImpl | DataType>>;
  /** Reads a file; returns undefined when it does not exist. Defaults to Deno.readTextFile. */
  readonly readText?: (path: string) => Promise<string | undefined>;
}

async function denoRead(path: string): Promise<string | undefined> {
  try {
    return await Deno.readTextFile(path);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return undefined;
    throw e;
  }
}

function filePath(url: URL): string {
  if (url.protocol !== "file:") throw new DefError(`${url.href}: definitions are read from files (a file: URL)`);
  return decodeURIComponent(url.pathname);
}

function join(dir: string, ...parts: string[]): string {
  return [dir.replace(/\/+$/, ""), ...parts].join("/");
}

/**
 * Loads `dir/entities.xml` and `dir/entity_defs/` into a registry (its `warnings` list what was ignored or kept as
 * metadata, each with file and line); throws DefError naming the file, line and what is wrong. `dir` is a path or a
 * file URL (e.g. `new URL("./defs/", import.meta.url)` in a game module).
 */
export async function loadDefs(
  where: string | URL,
  opts: LoadOptions = {},
): Promise<EntityRegistry> {
  const dir = typeof where === "string" ? where : filePath(where);
  const read = opts.readText ?? denoRead;
  const warnings: DefWarning[] = [];
  const table = new TypeTable(opts.userTypes);
  const env: TypeEnv = { table, warnings, resolveAlias: undefined };

  const listFile = join(dir, "entities.xml");
  const listText = await read(listFile);
  if (listText === undefined) {
    throw new DefError(`no entities.xml in ${dir}`, {
      source: { file: listFile, line: 1 },
    });
  }
  const listed = listEntities(parseXml(listText, listFile), warnings);
  const defsDir = join(dir, "entity_defs");

  for (const aliasName of ["types.xml", "alias.xml"]) {
    const file = join(defsDir, aliasName);
    const text = await read(file);
    if (text !== undefined) loadAliases(parseXml(text, file), env);
  }

  const entities: EntitySpec[] = [];
  const parts = new Map<string, EntitySpec>();
  const pending: {
    name: string;
    kind: "interfaces" | "components";
    ctx: DefContext;
  }[] = [];
  const queue = (spec: EntitySpec): void => {
    for (const i of spec.interfaces ?? []) {
      pending.push({
        name: i,
        kind: "interfaces",
        ctx: { source: spec.source, entity: spec.name },
      });
    }
    for (
      const [cname, c] of Object.entries(spec.components ?? {}) as [
        string,
        ComponentSpec,
      ][]
    ) {
      pending.push({
        name: c.type,
        kind: "components",
        ctx: { source: c.source, entity: spec.name, member: cname },
      });
    }
  };

  for (const e of listed) {
    const file = join(defsDir, `${e.name}.def`);
    const text = await read(file);
    if (text === undefined) {
      throw new DefError(
        `entity type '${e.name}' has no definition file ${file}`,
        {
          source: e.source,
          entity: e.name,
        },
      );
    }
    const spec = parseDefSpec(parseXml(text, file), e.name, env, {
      hasClient: e.hasClient,
      hasCell: e.hasCell,
      hasBase: e.hasBase,
      metadata: e.metadata,
    });
    entities.push(spec);
    queue(spec);
  }
  while (pending.length) {
    const p = pending.shift()!;
    if (parts.has(p.name)) continue;
    // KBEngine keeps interfaces and components in subfolders; older BigWorld files sit beside entities.
    const candidates = [
      join(defsDir, p.kind, `${p.name}.def`),
      join(defsDir, `${p.name}.def`),
    ];
    let found = false;
    for (const file of candidates) {
      const text = await read(file);
      if (text === undefined) continue;
      const spec = parseDefSpec(parseXml(text, file), p.name, env, {});
      parts.set(p.name, spec);
      queue(spec);
      found = true;
      break;
    }
    if (!found) {
      const what = p.kind === "interfaces" ? "interface" : "component type";
      throw new DefError(
        `${what} '${p.name}' does not exist (no ${candidates.join(" or ")})`,
        p.ctx,
      );
    }
  }
  return createRegistry({
    entities,
    interfaces: [...parts.values()],
    typeTable: table,
    warnings,
  });
}

interface Listed {
  name: string;
  hasClient?: boolean;
  hasCell?: boolean;
  hasBase?: boolean;
  metadata: Record<string, unknown>;
  source: XmlElement["source"];
}

function listEntities(root: XmlElement, warnings: DefWarning[]): Listed[] {
  const out: Listed[] = [];
  const visit = (el: XmlElement, hasClient: boolean | undefined) => {
    for (const c of el.children) {
      // BigWorld groups types into client-server and server-only sections.
      if (c.name === "ClientServerEntities") {
        visit(c, true);
        continue;
      }
      if (c.name === "ServerOnlyEntities") {
        visit(c, false);
        continue;
      }
      const item: Listed = {
        name: c.name,
        hasClient,
        metadata: {},
        source: c.source,
      };
      for (const [k, v] of Object.entries(c.attrs)) {
        const ctx = { source: c.source, entity: c.name };
        if (k === "hasClient" || k === "hasCell" || k === "hasBase") {
          item[k] = parseBool({ ...c, name: k, text: v }, ctx);
        } else {
          item.metadata[k] = v;
          warnings.push({
            ...ctx,
            message: `attribute ${k}="${v}" has no meaning here; kept as metadata`,
          });
        }
      }
      if (out.some((x) => x.name === c.name)) {
        throw new DefError(`entity type '${c.name}' is listed twice`, {
          source: c.source,
          entity: c.name,
        });
      }
      out.push(item);
    }
  };
  visit(root, undefined);
  return out;
}

function loadAliases(root: XmlElement, env: TypeEnv): void {
  const elements = new Map(root.children.map((c) => [c.name, c]));
  const resolving: string[] = [];
  const resolveAlias = (name: string): DataType | undefined => {
    const done = env.table.get(name);
    if (done) return done;
    const el = elements.get(name);
    if (!el) return undefined;
    if (resolving.includes(name)) {
      throw new DefError(
        `cycle of type aliases: ${[...resolving, name].join(" -> ")}`,
        {
          source: el.source,
          member: name,
        },
      );
    }
    resolving.push(name);
    const t = parseTypeElement(el, { ...env, resolveAlias }, { member: name });
    resolving.pop();
    if (BUILTIN_TYPES.has(name) || name in TYPE_ALIASES) {
      env.warnings.push({
        source: el.source,
        member: name,
        message: `alias ${name} redefines a built-in type as ${t.name}; the alias is used`,
      });
    }
    env.table.define(name, t);
    return t;
  };
  for (const el of root.children) resolveAlias(el.name);
}
