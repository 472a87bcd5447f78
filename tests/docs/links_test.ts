/**
 * The documentation holds together: every relative link of README.md and docs/*.md reaches a file of the repository
 * and, with an anchor, a heading of it; every code comment that cites `docs/NAME.md, "Section"` names a page and a
 * section that exist.
 */
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { dirname, join, normalize, relative } from "node:path";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
/** Folders that hold no source of ours. */
const SKIP = new Set(["toolchain", "node_modules", "data", "dist", ".git"]);

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens. */
export function slug(heading: string): string {
  return heading.trim().toLowerCase().replace(/[^\p{L}\p{N}\- _]/gu, "").replace(/ /g, "-");
}

/** The headings of a markdown text, outside fenced code. */
function headings(text: string): string[] {
  return text.replace(/^```[\s\S]*?^```/gm, "").match(/^#{1,6} .*$/gm)?.map((h) => h.replace(/^#+ /, "")) ?? [];
}

async function markdownPages(): Promise<string[]> {
  const pages = ["README.md"];
  for await (const e of Deno.readDir(join(ROOT, "docs"))) {
    if (e.isFile && e.name.endsWith(".md")) pages.push(`docs/${e.name}`);
  }
  return pages.sort();
}

async function sourceFiles(dir: string, out: string[] = []): Promise<string[]> {
  for await (const e of Deno.readDir(join(ROOT, dir))) {
    if (SKIP.has(e.name)) continue;
    const path = dir ? `${dir}/${e.name}` : e.name;
    if (e.isDirectory) await sourceFiles(path, out);
    else if (/\.(ts|js)$/.test(e.name)) out.push(path);
  }
  return out;
}

function exists(path: string): boolean {
  try {
    Deno.statSync(path);
    return true;
  } catch {
    return false;
  }
}

Deno.test("slug follows GitHub's anchors", () => {
  assert.equal(slug("A cellappmgr stalled or cut off"), "a-cellappmgr-stalled-or-cut-off");
  assert.equal(slug("The witness"), "the-witness");
  assert.equal(slug("Spaces, from a script"), "spaces-from-a-script");
});

Deno.test("every relative link of README.md and docs/ reaches a file and, with an anchor, one of its headings", async () => {
  const broken: string[] = [];
  for (const page of await markdownPages()) {
    const text = await Deno.readTextFile(join(ROOT, page));
    for (const [, link] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z]+:/.test(link)) continue;
      const [path, anchor] = link.split("#");
      const target = path ? normalize(join(ROOT, dirname(page), path)) : join(ROOT, page);
      if (!exists(target)) {
        broken.push(`${page}: ${link}: no ${relative(ROOT, target)}`);
        continue;
      }
      if (anchor && target.endsWith(".md")) {
        const anchors = headings(await Deno.readTextFile(target)).map(slug);
        if (!anchors.includes(anchor)) broken.push(`${page}: ${link}: no heading #${anchor}`);
      }
    }
  }
  assert.deepEqual(broken, []);
});

Deno.test('every comment citing docs/NAME.md, "Section" names a page and a section that exist', async () => {
  const pages = new Map<string, string[]>();
  for (const page of await markdownPages()) pages.set(page, headings(await Deno.readTextFile(join(ROOT, page))));
  const broken: string[] = [];
  let citations = 0;
  for (const file of await sourceFiles("")) {
    const text = await Deno.readTextFile(join(ROOT, file));
    for (const [, page, section] of text.matchAll(/(docs\/[a-z_]+\.md)(?:(?:,|\s*\()\s*(?:\*\s*)?"([^"\n]+)")?/g)) {
      citations++;
      const heads = pages.get(page);
      if (!heads) {
        broken.push(`${file}: ${page} does not exist`);
        continue;
      }
      if (section && !heads.includes(section)) broken.push(`${file}: ${page} has no section "${section}"`);
    }
  }
  assert.deepEqual(broken, []);
  assert.ok(citations > 0, "no comment cites docs/: the pattern above no longer matches how comments cite");
});
