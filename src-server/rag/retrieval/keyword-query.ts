/**
 * The words of a question worth matching in full-text search. Function words and
 * question words of English and Bahasa Melayu match nearly every chunk; keeping them
 * lets BM25 reward chunks for "the", "yang" and "berapa" instead of the subject.
 */
const STOP_WORDS = new Set(
  (
    // English
    "a an the and or but if of to in on at by for with from as is are was were be been being am do does did done " +
    "have has had having this that these those it its it's there their they them we our you your he she his her i me my " +
    "what which who whom whose when where why how much many whether not no yes can could should would will shall may might must " +
    "about into over under after before between during than then so such also any all each every some more most other same only " +
    "according please tell give list describe explain say says said according " +
    // Bahasa Melayu
    "yang dan atau tetapi jika kalau untuk kepada pada di ke dari daripada dengan oleh bagi dalam atas bawah antara " +
    "ini itu tersebut adalah ialah merupakan ada tiada tidak bukan ya juga lagi sudah telah akan sedang masih boleh dapat " +
    "apa apakah siapa siapakah bila bilakah bagaimana bagaimanakah mengapa kenapa berapa berapakah mana manakah adakah di mana " +
    "berapa banyak sebanyak berapa ramai se sebuah seorang sesuatu semua setiap beberapa lebih paling hanya sahaja pun lah kah " +
    "nya mereka kami kita anda saya dia beliau ia nyatakan sebutkan terangkan jelaskan senaraikan menurut berdasarkan"
  ).split(/\s+/),
);

/** The question reduced to its content words; the original when nothing would be left. */
export function keywordQuery(question: string): string {
  const words = question.toLowerCase().match(/[\p{L}\p{N}][\p{L}\p{N}'.\-/]*/gu) ?? [];
  const content = words.map((w) => w.replace(/[.'-]+$/, "")).filter((w) => w && !STOP_WORDS.has(w));
  return content.length > 0 ? content.join(" ") : question;
}
