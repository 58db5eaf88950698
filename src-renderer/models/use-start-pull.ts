/** Starting a download (a catalog model or the starter pair). */
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useApi } from "../api/api-context.js";
import type { CreatePullRequest, ModelPull } from "../api/contract.js";
import { createPull } from "../api/models-api.js";

export function useStartPull() {
  const client = useApi();
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (body: CreatePullRequest) => createPull(client, body),
    onSuccess: (pull) => queryClient.setQueryData<ModelPull[]>(["pulls"], (old) => [pull, ...(old ?? []).filter((p) => p.id !== pull.id)]),
  });
}
