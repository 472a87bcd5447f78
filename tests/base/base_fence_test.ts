/** The baseapp's hold-back after a stall (base/fence.ts): noticed where it acts, lifted by the cellappmgr's word. */
import assert from "node:assert/strict";
import { BaseAuthority } from "../../base/fence.ts";
import type { MgrLink } from "../../core/wire/mod.ts";
import { memoryLogger } from "../helpers/log.ts";

/** Blocks the event loop for `ms`, as a SIGSTOP or a long pause does. */
function stall(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end) { /* busy */ }
}

Deno.test("after a stall a baseapp acts again only once the cellappmgr confirms it, and never once fenced", async () => {
  // No channel: the registration that follows decides, as after a SIGCONT whose link was closed meanwhile.
  const link = { deadAfterMs: 400, channel: null } as unknown as MgrLink;
  const authority = new BaseAuthority(link, memoryLogger());
  try {
    assert.equal(authority.mayAct(), true);
    await authority.confirmed();

    stall(300);
    // Checked before any timer ran: the first callback after waking must not act.
    assert.equal(authority.mayAct(), false, "held back after a stall of over half the dead timeout");
    let confirmed = false;
    const waiting = authority.confirmed().then(() => (confirmed = true));
    await new Promise((r) => setTimeout(r, 150));
    assert.equal(confirmed, false, "waits for the cellappmgr's word");
    authority.registered();
    await waiting;
    assert.equal(authority.mayAct(), true);

    stall(300);
    const refused = authority.confirmed();
    authority.fenced("declared dead");
    await assert.rejects(refused, /fenced: declared dead/);

    stall(100);
    assert.equal(authority.mayAct(), true, "a stall under half the dead timeout holds nothing back");
  } finally {
    authority.close();
  }
});
