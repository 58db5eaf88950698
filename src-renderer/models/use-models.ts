/** The server's models (chat and embedding), shared by the pages. */
import { useQuery } from "@tanstack/react-query";
import { useApi } from "../api/api-context.js";
import type { Model, ModelType } from "../api/contract.js";
import { listModels } from "../api/models-api.js";

export function useModels() {
  const client = useApi();
  return useQuery({ queryKey: ["models"], queryFn: () => listModels(client).then((list) => list.data), staleTime: 30_000 });
}

/** Models of one type, the default first. */
export function modelsOfType(models: readonly Model[] | undefined, type: ModelType): Model[] {
  return (models ?? []).filter((m) => m.type === type).sort((a, b) => Number(b.is_default === true) - Number(a.is_default === true));
}

/** The model a request naming none would use: the flagged default, else the first. */
export function defaultModel(models: readonly Model[] | undefined, type: ModelType): Model | null {
  return modelsOfType(models, type)[0] ?? null;
}
