import assert from "node:assert/strict";
import { reachableAddress, reachableUrl, sameAddress } from "../../core/wire/mod.ts";

Deno.test("a wildcard bind is announced with the address the cellappmgr saw it connect from", () => {
  assert.equal(reachableAddress("0.0.0.0:7001", "10.1.2.3:50000"), "10.1.2.3:7001");
  assert.equal(reachableAddress("[::]:7001", "[fd00::5]:50000"), "[fd00::5]:7001");
  assert.equal(reachableAddress("10.0.0.9:7001", "10.1.2.3:50000"), "10.0.0.9:7001", "a named host is kept");
  assert.ok(sameAddress("0.0.0.0:7001", "10.1.2.3:7001"));
});

Deno.test("client URLs: a wildcard host becomes the seen address; a public or named host is kept", () => {
  assert.equal(reachableUrl("ws://0.0.0.0:9001/", "10.1.2.3:50000"), "ws://10.1.2.3:9001/");
  assert.equal(reachableUrl("ws://[::]:9001/", "[fd00::5]:1"), "ws://[fd00::5]:9001/");
  assert.equal(reachableUrl("wss://0.0.0.0/", "10.1.2.3:50000"), "wss://10.1.2.3:443/");
  assert.equal(reachableUrl("ws://game.example.com:9001/", "10.1.2.3:50000"), "ws://game.example.com:9001/");
  assert.equal(reachableUrl("ws://127.0.0.1:9001/", "127.0.0.1:50000"), "ws://127.0.0.1:9001/");
});
