/**
 * XML as a stream of events (saxes), with the refusals office and e-book parts need. Office
 * files never declare entities of their own: a DOCTYPE with an internal subset (the "billion
 * laughs", external entities reading local files) is refused, and saxes expands no entity
 * beyond XML's five, so an undeclared one fails the part as malformed. Nesting is bounded.
 * Element names arrive without their namespace prefix (`a:t` → `t`): the prefixes are the
 * writer's choice, the local names are the format's.
 */
import { SaxesParser } from "saxes";
import { ParseError } from "./types.js";

/** Deepest XML element nesting accepted; office parts nest a few dozen levels. */
export const MAX_XML_DEPTH = 256;

/** What an XML walk hears: element names without their namespace prefix (`a:t` → `t`). */
export interface XmlHandlers {
  /** An element opens; `attributes` keep their prefixes (`r:id`), see `attribute`. */
  open?(name: string, attributes: Record<string, string>): void;
  close?(name: string): void;
  /** Character data (CDATA included), as found between tags. */
  text?(text: string): void;
}

/**
 * Parses an XML string already in memory (a small part, a nav document) with the same rules.
 * @throws ParseError `corrupt_document` (malformed, or declaring entities), `document_too_complex` (nested too deeply).
 */
export function readXmlString(xml: string, handlers: XmlHandlers, what: string): void {
  const reader = new XmlReader(handlers, what);
  reader.write(xml);
  reader.close();
}

/** An attribute by local name, whatever its prefix (`id` finds `r:id`); `prefixed` skips unprefixed ones. */
export function attribute(attributes: Record<string, string>, local: string, prefixed = false): string | undefined {
  if (!prefixed && attributes[local] !== undefined) return attributes[local];
  for (const [name, value] of Object.entries(attributes)) {
    const colon = name.indexOf(":");
    if (colon !== -1 && name.slice(colon + 1) === local && !name.startsWith("xmlns:")) return value;
  }
  return undefined;
}

/** saxes with the refusals above and a depth limit; fed text in pieces. */
export class XmlReader {
  private readonly parser = new SaxesParser({ xmlns: false, position: false });
  private depth = 0;

  constructor(handlers: XmlHandlers, what: string) {
    const { parser } = this;
    parser.on("doctype", (doctype) => {
      if (/<!ENTITY/i.test(doctype) || doctype.includes("[")) {
        throw new ParseError("corrupt_document", `The file declares its own XML entities (${what}); office files never do, and such declarations are a known attack, so it was not read.`);
      }
    });
    parser.on("opentag", (tag) => {
      if (++this.depth > MAX_XML_DEPTH) throw new ParseError("document_too_complex", `The file nests XML elements more than ${MAX_XML_DEPTH} levels deep (${what}).`);
      handlers.open?.(localName(tag.name), tag.attributes);
    });
    parser.on("closetag", (tag) => {
      this.depth--;
      handlers.close?.(localName(tag.name));
    });
    const text = handlers.text?.bind(handlers);
    if (text) {
      parser.on("text", text);
      parser.on("cdata", text);
    }
    parser.on("error", (error) => {
      throw new ParseError("corrupt_document", `The file's XML is malformed (${what}): ${error.message.slice(0, 160)}`);
    });
  }

  write(text: string): void {
    this.parser.write(text);
  }

  close(): void {
    this.parser.close();
  }
}

/** `a:t` → `t`. */
function localName(name: string): string {
  const colon = name.indexOf(":");
  return colon === -1 ? name : name.slice(colon + 1);
}
