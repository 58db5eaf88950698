/**
 * Tunes a corpus's search on questions whose answers its owner knows (`search-tuning.ts`
 * says why and how): each question is embedded and searched once, its hybrid candidates
 * ranked again under every fusion tried, and the best setting stored as the corpus's
 * `searchDefaults` when asked and when it holds on held-out questions.
 */
import type { Principal } from "../domain/scopes.js";
import type { InferenceEngine } from "../engine/types.js";
import { invalidRequest } from "../errors.js";
import type { ModelRegistry } from "../models/model-registry.js";
import { embeddingInput } from "../models/embedding-prompts.js";
import type { DocumentStore } from "../store/document-store.js";
import { assertQueryable, type QueryService } from "./answer/query-service.js";
import type { CorpusService, CorpusView } from "./corpus-service.js";
import type { CorpusIndexes } from "./retrieval/corpus-indexes.js";
import type { SearchHit } from "./retrieval/corpus-index.js";
import { ndcgAt, recallAt } from "./retrieval/ir-metrics.js";
import { bestSetting, crossValidate, documentRanking, settingKey, tuningCandidates, type ScoredSetting, type SearchSetting } from "./retrieval/search-tuning.js";

export interface TuningQuestion {
  question: string;
  /** The documents that answer it: ids, or filenames (every document of that name). */
  relevant: string[];
}

export interface TuningInput {
  questions: TuningQuestion[];
  /** Store the best setting as the corpus's search defaults (when it holds on held-out questions). */
  apply: boolean;
}

export interface TuningResult {
  questions: number;
  /** The settings in force before tuning (the corpus's, else the server's) and the best found, each with its scores. */
  current: ScoredSetting;
  best: ScoredSetting;
  /** Two-fold cross-validation: mean nDCG@10 of the setting chosen on one half, on the other half; the settings in force on all. */
  heldOut: { tuned: number; current: number };
  /** Every setting tried, best first. */
  settings: ScoredSetting[];
  /** Whether the corpus's search defaults were changed, and why not when they were not. */
  applied: boolean;
  notApplied: "not_asked" | "already_best" | "did_not_hold" | null;
  corpus: CorpusView;
}

/** Passages each question is ranked to: what a client asking for ten gets. */
const TUNING_TOP_K = 10;
export const MIN_TUNING_QUESTIONS = 4;
export const MAX_TUNING_QUESTIONS = 500;

export interface SearchTuningDeps {
  corpora: CorpusService;
  documents: DocumentStore;
  indexes: CorpusIndexes;
  registry: ModelRegistry;
  engine: InferenceEngine;
  queries: QueryService;
}

export class SearchTuningService {
  constructor(private readonly deps: SearchTuningDeps) {}

  async tune(principal: Principal, corpusId: string, input: TuningInput, signal: AbortSignal): Promise<TuningResult & { promptTokens: number }> {
    const corpus = await this.deps.corpora.get(principal, corpusId);
    assertQueryable(corpus);
    const relevant = await this.resolveRelevant(corpusId, input.questions);
    const current = this.deps.queries.searchSettings(corpus.searchDefaults, {});
    const currentSetting: SearchSetting = { search: current.search, fusion: current.search === "hybrid" ? current.fusion : null };
    const settings = tuningCandidates(currentSetting);

    const embedded = await this.deps.engine.embed(
      this.deps.registry.resolve(corpus.embeddingModel, "embedding_model"),
      input.questions.map((q) => embeddingInput(corpus.embeddingPrompts.query, q.question)),
      signal,
    );
    const index = await this.deps.indexes.get(corpusId);
    // scores[setting][question]
    const ndcg = settings.map(() => [] as number[]);
    const recall = settings.map(() => [] as number[]);
    for (const [q, { question }] of input.questions.entries()) {
      signal.throwIfAborted();
      const vector = embedded.vectors[q]!;
      const candidates = await index.hybridCandidates(question, vector, TUNING_TOP_K);
      for (const [s, setting] of settings.entries()) {
        let hits: SearchHit[];
        if (setting.search === "hybrid" && candidates) hits = index.rankHybrid(candidates, setting.fusion!, TUNING_TOP_K);
        // A question with no keyword terms is searched by vector in hybrid mode, as `search` does.
        else hits = await index.search({ mode: setting.search === "keyword" ? "keyword" : "vector", text: question, vector, topK: TUNING_TOP_K });
        const ranked = documentRanking(hits);
        ndcg[s]!.push(ndcgAt(ranked, relevant[q]!, 10));
        recall[s]!.push(recallAt(ranked, relevant[q]!, 10));
      }
    }
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    const scored: ScoredSetting[] = settings.map((s, i) => ({ ...s, ndcg: mean(ndcg[i]!), recall: mean(recall[i]!) }));
    const all = input.questions.map((_, q) => q);
    const best = scored[bestSetting(ndcg, all)]!;
    const heldOut = crossValidate(ndcg);

    let notApplied: TuningResult["notApplied"] = null;
    if (!input.apply) notApplied = "not_asked";
    else if (settingKey(best) === settingKey(currentSetting)) notApplied = "already_best";
    // Only a choice that beats the settings in force on questions it was not chosen on is kept.
    else if (heldOut.tuned <= heldOut.current) notApplied = "did_not_hold";
    let updated = corpus;
    if (notApplied === null) {
      const fusion = best.fusion && { method: best.fusion.method, vectorWeight: best.fusion.vectorWeight, keywordTrust: best.fusion.keywordTrust ?? "auto" };
      updated = await this.deps.corpora.update(principal, corpusId, { searchDefaults: { search: best.search, ...(fusion ? { fusion } : {}) } });
    }
    return {
      questions: input.questions.length,
      current: scored[0]!,
      best,
      heldOut,
      settings: [...scored].sort((a, b) => b.ndcg - a.ndcg || b.recall - a.recall),
      applied: notApplied === null,
      notApplied,
      corpus: updated,
      promptTokens: embedded.promptTokens,
    };
  }

  /** Each question's relevant documents as ids; 400 `unknown_document` naming the first that is not in the corpus. */
  private async resolveRelevant(corpusId: string, questions: readonly TuningQuestion[]): Promise<Set<string>[]> {
    const documents = (await this.deps.documents.ofCorpus(corpusId)).filter((d) => d.status === "indexed");
    const ids = new Set(documents.map((d) => d.id));
    const byName = new Map<string, string[]>();
    for (const d of documents) byName.set(d.filename, [...(byName.get(d.filename) ?? []), d.id]);
    return questions.map((q, i) => {
      const found = new Set<string>();
      for (const [j, name] of q.relevant.entries()) {
        const matches = ids.has(name) ? [name] : byName.get(name);
        if (!matches) throw invalidRequest(`questions.${i}.relevant.${j}: '${name}' is neither the id nor the filename of an indexed document of this corpus`, "unknown_document", `questions.${i}.relevant.${j}`);
        for (const id of matches) found.add(id);
      }
      return found;
    });
  }
}
