/**
 * PowerPoint presentations (PPTX). Slides in presentation order (`presentation.xml`'s slide
 * list through its relationships), each read as shapes in drawing order: the title
 * placeholder becomes the slide's heading ("Slide 7" when it has none), text frames become
 * paragraphs or lists (bullet levels kept), tables Markdown tables, and the speaker notes a
 * paragraph starting "Notes:" after the slide's content, so a passage that cites a slide
 * carries what the speaker said about it. Every block's page is its slide number, which is
 * what a citation shows.
 *
 * Slide numbers, dates and footers repeated from the master are left out; so are charts and
 * SmartArt (their text lives in other parts) and the fallback copies of shapes newer
 * PowerPoint versions write twice (`mc:AlternateContent`).
 */
import { DocumentBuilder } from "./document-builder.js";
import { MAX_WHOLE_PART_BYTES, OfficeArchive, readDcTitle, readRelationships } from "./office-archive.js";
import { attribute } from "./office-xml.js";
import { tableBlocks } from "./sheet-tables.js";
import { ParseError, type ParsedDocument } from "./types.js";

/** Most slides read (the archive's entry limit already bounds them; this keeps the message clear). */
const MAX_SLIDES = 5000;
/** Placeholders the master fills in on every slide: not content. */
const CHROME_PLACEHOLDERS = new Set(["sldNum", "dt", "ftr", "hdr", "sldImg"]);
const TITLE_PLACEHOLDERS = new Set(["title", "ctrTitle"]);
/** Placeholders whose paragraphs are bullets unless they say otherwise (the master's body style). */
const BULLET_PLACEHOLDERS = new Set(["body", "obj"]);
/** Titles tools write when the author set none. */
const GENERIC_TITLES = new Set(["powerpoint presentation", "pptxgenjs presentation", "presentation"]);

interface Paragraph {
  level: number;
  bullet: "inherit" | "none" | "bullet" | "number";
  text: string;
}

/** A text frame (with its placeholder type and distance from the slide's top, when known) or a table. */
type SlideItem = { kind: "text"; placeholder: string | null; top: number | null; paragraphs: Paragraph[] } | { kind: "table"; rows: string[][] };
type TextItem = Extract<SlideItem, { kind: "text" }>;

/**
 * Parses a PPTX file. `pageCount` is the number of slides; the title is `dc:title` from the
 * document properties, else the first slide's title.
 * @throws ParseError `corrupt_document`, `document_too_large` (zip bombs, too many slides), `document_too_complex`, `empty_document`.
 */
export async function parsePptx(bytes: Uint8Array): Promise<ParsedDocument> {
  const archive = OfficeArchive.open(bytes, "PowerPoint presentation");
  if (!archive.has("ppt/presentation.xml")) throw new ParseError("corrupt_document", "The file is a ZIP archive but not a PowerPoint presentation (no ppt/presentation.xml).");
  const relationships = await readRelationships(archive, "ppt/presentation.xml");
  const ids: string[] = [];
  await archive.readXml("ppt/presentation.xml", {
    open(name, attributes) {
      const id = attribute(attributes, "id", true);
      if (name === "sldId" && id) ids.push(id);
    },
  });
  const slides = ids.map((id) => relationships.get(id)).flatMap((r) => (r && r.type === "slide" && archive.has(r.target) ? [r.target] : []));
  if (slides.length > MAX_SLIDES) throw new ParseError("document_too_large", `The presentation has ${slides.length.toLocaleString("en")} slides; the limit is ${MAX_SLIDES.toLocaleString("en")}.`);
  const builder = new DocumentBuilder();
  let firstTitle: string | null = null;
  for (const [index, part] of slides.entries()) {
    const page = index + 1;
    const items = await readShapes(archive, part);
    const notesPart = [...(await readRelationships(archive, part)).values()].find((r) => r.type === "notesSlide")?.target;
    const notes = notesPart && archive.has(notesPart) ? notesText(await readShapes(archive, notesPart)) : "";
    const titleShape = titleOf(items);
    const title = titleShape ? oneLine(titleShape.paragraphs.map((p) => p.text).join(" ")) : "";
    const rest = items.filter((item) => item !== titleShape);
    if (title === "" && notes === "" && rest.every((item) => item.kind === "text" && item.paragraphs.every((p) => p.text.trim() === ""))) continue;
    firstTitle ??= title || null;
    builder.add({ kind: "heading", level: 1, text: title || `Slide ${page}`, page });
    for (const item of rest) {
      if (item.kind === "table") {
        const [header = [], ...body] = item.rows;
        for (const table of tableBlocks(header, body)) builder.add({ kind: "table", text: table, page });
      } else {
        addParagraphs(builder, item, page);
      }
    }
    if (notes !== "") builder.add({ kind: "paragraph", text: `Notes: ${notes}`, page });
  }
  const declared = await readDcTitle(archive, "docProps/core.xml");
  const title = declared && !GENERIC_TITLES.has(declared.toLowerCase()) ? declared : firstTitle;
  return builder.build({ format: "pptx", title, pageCount: slides.length });
}

/** Longest text taken for a slide's title when no title placeholder says which it is. */
const MAX_TITLE_CHARS = 150;

/**
 * The slide's title: its title placeholder, else (slides converted from PPT, decks made by
 * tools) the top-most text frame when it holds one short line that is not a bullet.
 */
function titleOf(items: SlideItem[]): TextItem | undefined {
  const texts = items.filter((item): item is TextItem => item.kind === "text");
  const placeholder = texts.find((item) => item.placeholder !== null && TITLE_PLACEHOLDERS.has(item.placeholder));
  if (placeholder) return placeholder;
  const top = texts.filter((item) => item.top !== null).sort((a, b) => a.top! - b.top!)[0] ?? texts[0];
  const lines = top?.paragraphs.filter((p) => p.text.trim() !== "") ?? [];
  const bulletsByDefault = top?.placeholder !== null && top?.placeholder !== undefined && BULLET_PLACEHOLDERS.has(top.placeholder);
  const [line] = lines;
  if (!top || lines.length !== 1 || !line || line.bullet === "bullet" || line.bullet === "number" || (line.bullet === "inherit" && bulletsByDefault)) return undefined;
  return oneLine(line.text).length <= MAX_TITLE_CHARS ? top : undefined;
}

/** A text frame's paragraphs as blocks: runs of bullets as one list, runs of plain lines as one paragraph. */
function addParagraphs(builder: DocumentBuilder, item: TextItem, page: number): void {
  const bulletsByDefault = item.placeholder !== null && BULLET_PLACEHOLDERS.has(item.placeholder);
  let run: string[] = [];
  let runIsList = false;
  const counters: number[] = [];
  const flush = (): void => {
    if (run.length > 0) builder.add({ kind: runIsList ? "list" : "paragraph", text: run.join("\n"), page });
    run = [];
  };
  for (const paragraph of item.paragraphs) {
    const text = paragraph.text.trim();
    if (text === "") continue;
    const isList = paragraph.bullet === "bullet" || paragraph.bullet === "number" || (paragraph.bullet === "inherit" && bulletsByDefault);
    if (isList !== runIsList) {
      flush();
      runIsList = isList;
      counters.length = 0;
    }
    if (!isList) {
      run.push(text);
      continue;
    }
    const level = Math.min(8, paragraph.level);
    counters.length = level + 1;
    counters[level] = (counters[level] ?? 0) + 1;
    const marker = paragraph.bullet === "number" ? `${counters[level]}.` : "-";
    run.push(`${"  ".repeat(level)}${marker} ${oneLine(text)}`);
  }
  flush();
}

/** The speaker's text on a notes page (its body placeholder), lines kept. */
function notesText(items: SlideItem[]): string {
  return items
    .flatMap((item) => (item.kind === "text" && item.placeholder === "body" ? item.paragraphs.map((p) => p.text.trim()) : []))
    .filter((line) => line !== "")
    .join("\n");
}

/**
 * A slide's (or notes page's) text frames and tables in drawing order, chrome placeholders
 * left out. A slide part is at most `MAX_WHOLE_PART_BYTES`: its text is held until the slide ends.
 */
async function readShapes(archive: OfficeArchive, part: string): Promise<SlideItem[]> {
  const items: SlideItem[] = [];
  let shape: TextItem | null = null;
  let table: string[][] | null = null;
  let row: string[] | null = null;
  let cell: string[] | null = null;
  let paragraph: Paragraph | null = null;
  let inProperties = false;
  let inText = false;
  let fallback = 0;
  await archive.readXml(part, {
    open(name, attributes) {
      if (fallback > 0 || name === "Fallback") {
        fallback++;
        return;
      }
      switch (name) {
        case "sp":
          shape = { kind: "text", placeholder: null, top: null, paragraphs: [] };
          break;
        case "off":
          if (shape && shape.top === null && paragraph === null) shape.top = Number(attributes.y) || 0;
          break;
        case "ph":
          if (shape) shape.placeholder = attributes.type ?? "obj";
          break;
        case "tbl":
          table = [];
          break;
        case "tr":
          row = table ? [] : null;
          break;
        case "tc":
          cell = row ? [] : null;
          break;
        case "p":
          paragraph = { level: 0, bullet: "inherit", text: "" };
          break;
        case "pPr":
          if (paragraph) {
            inProperties = true;
            paragraph.level = Math.max(0, Math.trunc(Number(attributes.lvl ?? 0)) || 0);
          }
          break;
        case "buNone":
        case "buChar":
        case "buAutoNum":
          if (paragraph && inProperties) paragraph.bullet = name === "buNone" ? "none" : name === "buChar" ? "bullet" : "number";
          break;
        case "t":
          inText = paragraph !== null;
          break;
        case "br":
          if (paragraph) paragraph.text += "\n";
          break;
      }
    },
    text(text) {
      if (inText && paragraph) paragraph.text += text;
    },
    close(name) {
      if (fallback > 0) {
        fallback--;
        return;
      }
      switch (name) {
        case "t":
          inText = false;
          break;
        case "pPr":
          inProperties = false;
          break;
        case "p":
          if (paragraph && cell) cell.push(paragraph.text);
          else if (paragraph && shape) shape.paragraphs.push(paragraph);
          paragraph = null;
          break;
        case "tc":
          if (cell && row) row.push(oneLine(cell.join(" ")));
          cell = null;
          break;
        case "tr":
          if (row && table) table.push(row);
          row = null;
          break;
        case "tbl":
          if (table && table.length > 0) items.push({ kind: "table", rows: table });
          table = null;
          break;
        case "sp":
          if (shape && !(shape.placeholder !== null && CHROME_PLACEHOLDERS.has(shape.placeholder)) && shape.paragraphs.length > 0) items.push(shape);
          shape = null;
          break;
      }
    },
  }, MAX_WHOLE_PART_BYTES);
  return items;
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}
