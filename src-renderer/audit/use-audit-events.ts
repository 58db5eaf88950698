/** The audit entries matching the filters, a page at a time ("load more" follows `last_id`). */
import { useInfiniteQuery } from "@tanstack/react-query";
import { useApi } from "../api/api-context.js";
import { listAuditEvents } from "../api/audit-api.js";
import { eventsQuery, type AuditFilters } from "./audit-filters.js";

export function useAuditEvents(filters: AuditFilters) {
  const client = useApi();
  return useInfiniteQuery({
    queryKey: ["audit-events", filters],
    queryFn: ({ pageParam, signal }) => listAuditEvents(client, eventsQuery(filters, pageParam), signal),
    initialPageParam: undefined as string | undefined,
    getNextPageParam: (last) => (last.has_more && last.last_id ? last.last_id : undefined),
  });
}
