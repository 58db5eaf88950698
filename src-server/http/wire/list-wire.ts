/** Paginated lists: `?limit&after&before&order` in, OpenAI's list object out. */
import { z } from "zod";
import type { ListPage } from "../../contract/index.js";
import type { PageRequest } from "../../store/pagination.js";

export const ListQuerySchema = z
  .object({
    limit: z.coerce.number().int().min(1).max(100).default(20),
    after: z.string().min(1).max(128).optional(),
    before: z.string().min(1).max(128).optional(),
    order: z.enum(["asc", "desc"]).default("desc"),
  })
  .strict();

export function toPageRequest(query: z.infer<typeof ListQuerySchema>): PageRequest {
  return { limit: query.limit, order: query.order, after: query.after, before: query.before };
}

export function listObject<T extends { id: string }>(data: T[], hasMore: boolean): ListPage<T> {
  return { object: "list", data, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null, has_more: hasMore };
}
