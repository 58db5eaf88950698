/**
 * Follows a corpus's indexing events while mounted: keeps the corpus and document
 * queries fresh and hands every event to `onEvent`. Reconnects after a dropped stream.
 */
import { useQueryClient } from "@tanstack/react-query";
import { useEffect, useEffectEvent, useMemo, useState } from "react";
import { isAbort } from "../api/api-error.js";
import { useApi } from "../api/api-context.js";
import type { Corpus, CorpusEvent } from "../api/contract.js";
import { followCorpusEvents } from "../api/corpora-api.js";

const RECONNECT_MS = 3000;
/**
 * Lists are fetched again at most this often while documents change: a mailbox of thousands
 * of messages sends two status events per message, and refetching on each would never settle.
 */
const REFRESH_MS = 1000;

/** Runs `run` at once, then at most once per `ms` while calls keep coming (the last call is never lost). */
function throttle(run: () => void, ms: number): { call: () => void; cancel: () => void } {
  let timer: ReturnType<typeof setTimeout> | undefined;
  let pending = false;
  const fire = () => {
    timer = undefined;
    if (!pending) return;
    pending = false;
    run();
    timer = setTimeout(fire, ms);
  };
  return {
    call: () => {
      pending = true;
      if (timer === undefined) fire();
    },
    cancel: () => clearTimeout(timer),
  };
}

export function useCorpusEvents(corpusId: string, onEvent: (event: CorpusEvent) => void): { connected: boolean } {
  const client = useApi();
  const queryClient = useQueryClient();
  const [connected, setConnected] = useState(false);
  const refresh = useMemo(
    () => ({
      documents: throttle(() => void queryClient.invalidateQueries({ queryKey: ["documents", corpusId] }), REFRESH_MS),
      corpus: throttle(() => void queryClient.invalidateQueries({ queryKey: ["corpus", corpusId] }), REFRESH_MS),
    }),
    [queryClient, corpusId],
  );
  useEffect(
    () => () => {
      refresh.documents.cancel();
      refresh.corpus.cancel();
    },
    [refresh],
  );
  const handle = useEffectEvent((event: CorpusEvent) => {
    setConnected(true);
    if (event.object === "rag.corpus.snapshot") {
      queryClient.setQueryData<Corpus>(["corpus", corpusId], event.corpus);
      void queryClient.invalidateQueries({ queryKey: ["corpora"] });
    } else if (event.object === "rag.document.status") {
      refresh.documents.call();
      // A document's end changes the corpus's counts (a failure under a corpus that stays 'ready').
      if (event.status === "indexed" || event.status === "failed") refresh.corpus.call();
    } else if (event.object === "rag.corpus.deleted") {
      void queryClient.invalidateQueries({ queryKey: ["corpora"] });
    }
    onEvent(event);
  });

  useEffect(() => {
    const controller = new AbortController();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const run = () => {
      followCorpusEvents(client, corpusId, handle, controller.signal)
        .catch((error: unknown) => {
          if (isAbort(error)) return;
        })
        .finally(() => {
          if (controller.signal.aborted) return;
          setConnected(false);
          timer = setTimeout(run, RECONNECT_MS);
        });
    };
    run();
    return () => {
      controller.abort();
      clearTimeout(timer);
    };
  }, [client, corpusId]);

  return { connected };
}
