/**
 * Opens Deno KV from a --kv value: ":memory:", a KV Connect URL (a remote
 * denokv, authenticated by DENO_KV_ACCESS_TOKEN), or a file path whose folder
 * is created when missing.
 */
export async function openKv(spec: string): Promise<Deno.Kv> {
  if (spec === ":memory:" || /^https?:\/\//.test(spec)) {
    return await Deno.openKv(spec);
  }
  const slash = spec.lastIndexOf("/");
  if (slash > 0) await Deno.mkdir(spec.slice(0, slash), { recursive: true });
  try {
    return await Deno.openKv(spec);
  } catch (e) {
    throw new Error(`cannot open Deno KV at ${spec}: ${(e as Error).message}`);
  }
}
