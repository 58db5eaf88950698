/**
 * The cited words drawn over a page image OCR read: one mark per word box, the supporting
 * sentence stronger. Purely visual (the panel gives the same text as text); the first mark
 * is scrolled into view.
 */
import { useEffect, useRef } from "react";
import type { PageHighlight } from "./ocr-highlight.js";

export function OcrOverlay({ highlight }: { highlight: PageHighlight }) {
  const layer = useRef<HTMLDivElement>(null);
  const strong = new Set(highlight.support.map((w) => w.index));
  const boxes = [...highlight.passage.filter((w) => !strong.has(w.index)), ...highlight.support];

  useEffect(() => {
    const first = layer.current?.querySelector(".ocr-hl.support") ?? layer.current?.querySelector(".ocr-hl");
    // (jsdom has no scrollIntoView.)
    if (first && "scrollIntoView" in first) first.scrollIntoView({ block: "center" });
  }, [highlight]);

  return (
    <div ref={layer} className="ocr-overlay" aria-hidden="true" data-page={highlight.page}>
      {boxes.map((w) => (
        <span
          key={w.index}
          className={strong.has(w.index) ? "ocr-hl support" : "ocr-hl"}
          style={{ left: `${w.left}%`, top: `${w.top}%`, width: `${w.width}%`, height: `${w.height}%` }}
        />
      ))}
    </div>
  );
}
