/** Model downloads: the list, kept live by the pull events stream; models refresh when one finishes. */
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useEffect } from "react";
import { isAbort, isMissingEndpoint } from "../api/api-error.js";
import { useApi } from "../api/api-context.js";
import type { ModelPull } from "../api/contract.js";
import { followPullEvents, listPulls } from "../api/models-api.js";

export const ACTIVE_PULL = new Set<ModelPull["status"]>(["queued", "downloading", "verifying", "converting"]);

function upsert(list: ModelPull[] | undefined, pull: ModelPull): ModelPull[] {
  const rest = (list ?? []).filter((p) => p.id !== pull.id);
  return [pull, ...rest].sort((a, b) => b.created_at - a.created_at);
}

export function usePulls() {
  const client = useApi();
  const queryClient = useQueryClient();
  const query = useQuery({ queryKey: ["pulls"], queryFn: () => listPulls(client).then((l) => l.data), retry: false });
  const available = !(query.isError && isMissingEndpoint(query.error, ["model_not_found"]));

  useEffect(() => {
    if (!available) return;
    const controller = new AbortController();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const finished = (pull: ModelPull) => {
      if (pull.status === "done") {
        void queryClient.invalidateQueries({ queryKey: ["models"] });
        void queryClient.invalidateQueries({ queryKey: ["catalog"] });
      }
    };
    const run = () => {
      followPullEvents(
        client,
        (event) => {
          if (event.object === "model.pull.snapshot") queryClient.setQueryData(["pulls"], event.data);
          else {
            queryClient.setQueryData<ModelPull[]>(["pulls"], (old) => upsert(old, event.pull));
            finished(event.pull);
          }
        },
        controller.signal,
      )
        .catch((error: unknown) => {
          if (isAbort(error)) return;
        })
        .finally(() => {
          if (!controller.signal.aborted) timer = setTimeout(run, 5000);
        });
    };
    run();
    return () => {
      controller.abort();
      clearTimeout(timer);
    };
  }, [available, client, queryClient]);

  return { ...query, available };
}
