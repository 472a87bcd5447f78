/**
 * Where a test finds a headless Chromium (Debian's `chromium`, or CHROMIUM_PATH):
 * browser tests run when one is found and say they were skipped when not.
 */

const CANDIDATES = ["/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"];

/** The Chromium to drive, or null after printing why `test` is skipped. */
export function findChromium(test: string): string | null {
  const named = Deno.env.get("CHROMIUM_PATH");
  for (const path of named ? [named] : CANDIDATES) {
    try {
      if (Deno.statSync(path).isFile) return path;
    } catch {
      // not here
    }
  }
  console.log(
    `${test}: skipped: no Chromium found at ${named ?? CANDIDATES.join(", ")} ` +
      "(apt-get install chromium, or set CHROMIUM_PATH)",
  );
  return null;
}
