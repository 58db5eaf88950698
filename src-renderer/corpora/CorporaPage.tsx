/** Corpora: the list, or one corpus with its documents. */
import { CorpusDetail } from "./CorpusDetail.js";
import { CorpusList } from "./CorpusList.js";
import "./corpora.css";

export function CorporaPage({ corpusId }: { corpusId: string | null }) {
  return corpusId ? <CorpusDetail key={corpusId} corpusId={corpusId} /> : <CorpusList />;
}
