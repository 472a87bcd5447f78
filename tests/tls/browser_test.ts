/**
 * TLS in a real headless Chromium that trusts the test certificate (by its key's hash,
 * --ignore-certificate-errors-spki-list): the dashboard over HTTPS goes live through its watch socket over wss://,
 * and the SDK's example page logs in and plays over wss://. Skipped, saying so, without Chromium or openssl.
 */
import assert from "node:assert/strict";
import puppeteer, { type Browser, type Page } from "puppeteer-core";
import { buildExample } from "../../tools/browser.ts";
import { haveOpenssl, makeTestCerts } from "../helpers/certs.ts";
import { findChromium } from "../helpers/chromium.ts";
import { Procs } from "../../testing/procs.ts";

const chromium = findChromium("tls browser_test");
const openssl = await haveOpenssl();
if (!openssl) console.log("tls browser_test: skipped: no openssl command (apt-get install openssl)");

const TOKEN = "tls-dash-t0ken";

async function until(page: Page, what: string, expr: string, ms = 15_000): Promise<void> {
  try {
    await page.waitForFunction(expr, { timeout: ms });
  } catch (e) {
    const status = await page.evaluate(`document.getElementById("status")?.textContent`);
    throw new Error(`the page did not show ${what} within ${ms} ms (${expr}); status "${status}": ${e}`);
  }
}

Deno.test({
  name: "Chromium: the dashboard over https watches over wss, and the SDK page plays over wss",
  ignore: chromium === null || !openssl,
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    await using certs = await makeTestCerts();
    await using procs = new Procs();
    const dir = await Deno.makeTempDir({ prefix: "tls_example_page_" });
    // The page itself comes over plain HTTP from loopback; what it talks to is TLS.
    const pages = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
      const name = new URL(req.url).pathname.replace(/^\/+/, "") || "index.html";
      if (!/^[\w.-]+$/.test(name)) return new Response("not found", { status: 404 });
      const type = name.endsWith(".js") ? "text/javascript" : "text/html";
      return await Deno.readFile(`${dir}/${name}`).then(
        (body) => new Response(body, { headers: { "content-type": type } }),
        () => new Response("not found", { status: 404 }),
      );
    });
    let browser: Browser | null = null;
    try {
      const tls = [`--tls-cert=${certs.cert}`, `--tls-key=${certs.key}`, `--tls-ca=${certs.ca}`];
      const env = { SEAMLESS_SECRET: "s3cret", SEAMLESS_ADMIN_TOKEN: TOKEN };
      const [mgr] = await Promise.all([
        procs.start(["--role=mgr", "--port=0", "--admin-port=0", "--npcs=20", ...tls], { env }),
        buildExample(dir),
      ]);
      const admin = mgr.ready.admin!;
      assert.match(admin, /^https:/);
      const member = [`--mgr=${mgr.ready.address}`, "--port=0", ...tls];
      await procs.start(["--role=cell", ...member], { env });
      const base = await procs.start(["--role=base", "--client-port=0", "--client-spawn", ...member], { env });
      const clientUrl = base.ready.clientUrl as string;
      assert.match(clientUrl, /^wss:\/\//);

      browser = await puppeteer.launch({
        executablePath: chromium!,
        headless: true,
        pipe: true,
        args: [
          "--no-sandbox",
          "--disable-gpu",
          "--disable-dev-shm-usage",
          `--ignore-certificate-errors-spki-list=${certs.spki}`,
        ],
      });
      const problems: string[] = [];
      const watch = (page: Page) => {
        page.on("pageerror", (e) => problems.push(`page error: ${(e as Error).message}`));
        page.on("console", (m) => m.type() === "error" && problems.push(`console: ${m.text()}`));
      };

      const dash = await browser.newPage();
      watch(dash);
      await dash.goto(`${admin}/#token=${TOKEN}`, { waitUntil: "load" });
      assert.equal(await dash.evaluate(`location.protocol`), "https:");
      // "live" only once the watch socket (wss:// on an https page) said hello.
      await until(dash, "that it is live", `document.getElementById("status").textContent === "live"`, 20_000);

      const play = await browser.newPage();
      watch(play);
      const query = new URLSearchParams({ server: clientUrl, name: "tlsplayer", x: "0", z: "0" });
      await play.goto(`http://127.0.0.1:${pages.addr.port}/index.html?${query}`, { waitUntil: "load" });
      await until(play, "that it plays", `document.body.dataset.state === "playing"`);
      assert.ok(Number(await play.evaluate(`document.getElementById("player").textContent`)) > 0);
      assert.deepEqual(problems, []);
    } finally {
      await browser?.close();
      await pages.shutdown();
      await Deno.remove(dir, { recursive: true });
    }
  },
});
