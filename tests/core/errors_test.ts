/** errorText: the text of any thrown value, the same text as before for an Error. */
import assert from "node:assert/strict";
import { errorText } from "../../core/errors.ts";
import { DefError } from "../../core/def/mod.ts";

Deno.test("errorText gives a thrown non-Error's own text", () => {
  assert.equal(errorText("the link went down"), "the link went down");
  assert.equal(errorText(42), "42");
  assert.equal(errorText(undefined), "undefined");
  assert.equal(errorText(null, { stack: true }), "null");
  assert.equal(errorText(Object.create(null)), "[object Object]");
});

Deno.test("errorText gives an Error's message, or its stack when asked, and the Error keeps its cause", () => {
  const root = new Error("socket closed");
  const e = new DefError("cannot read entities.xml", { source: { file: "entities.xml", line: 3 } }, { cause: root });
  assert.equal(errorText(e), "entities.xml:3: cannot read entities.xml");
  assert.equal(e.cause, root);
  const stack = errorText(e, { stack: true });
  assert.ok(stack.startsWith("DefError: entities.xml:3: cannot read entities.xml\n"), stack);
  assert.match(stack, /errors_test\.ts/);
});
