/**
 * A small element tree over saxes, with the line of every element, so that the
 * .def loader can report semantic errors at file:line, not only malformed XML.
 */
import { SaxesParser } from "saxes";
import { DefError, SourcePos } from "./errors.ts";

/** An XML element: its name, attributes, direct text, children and position. */
export interface XmlElement {
  readonly name: string;
  readonly attrs: Readonly<Record<string, string>>;
  /** The element's own text (not its children's), trimmed. */
  readonly text: string;
  readonly children: readonly XmlElement[];
  readonly source: SourcePos;
}

interface Building {
  name: string;
  attrs: Record<string, string>;
  text: string;
  children: XmlElement[];
  source: SourcePos;
}

/** Parses XML text; malformed XML throws a DefError at file:line. */
export function parseXml(text: string, file: string): XmlElement {
  const parser = new SaxesParser({ position: true });
  const stack: Building[] = [];
  let root: XmlElement | undefined;
  let error: DefError | undefined;
  parser.on("opentag", (tag) => {
    stack.push({
      name: tag.name,
      attrs: { ...(tag.attributes as Record<string, string>) },
      text: "",
      children: [],
      source: { file, line: parser.line },
    });
  });
  parser.on("text", (t) => {
    if (stack.length) stack[stack.length - 1].text += t;
  });
  parser.on("cdata", (t) => {
    if (stack.length) stack[stack.length - 1].text += t;
  });
  parser.on("closetag", () => {
    const b = stack.pop();
    if (!b) return;
    const el: XmlElement = { ...b, text: b.text.trim() };
    if (stack.length) stack[stack.length - 1].children.push(el);
    else root = el;
  });
  parser.on("error", (e) => {
    if (error) return;
    // saxes messages start with "line:column: ".
    const m = /^(\d+):(\d+): (.*)$/s.exec(e.message);
    error = new DefError(
      `malformed XML: ${m ? m[3] : e.message}`,
      { source: { file, line: m ? Number(m[1]) : parser.line } },
    );
  });
  parser.write(text).close();
  if (error) throw error;
  if (!root) {
    throw new DefError("malformed XML: no root element", {
      source: { file, line: 1 },
    });
  }
  return root;
}

/** The first child with this name, or undefined. */
export function child(el: XmlElement, name: string): XmlElement | undefined {
  return el.children.find((c) => c.name === name);
}
