/** The workbench: providers, sign-in, the shell and the page for the current route. */
import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { Tooltip } from "radix-ui";
import { lazy, Suspense, useState } from "react";
import { ApiProvider } from "./api/api-context.js";
import { ApiError } from "./api/api-error.js";
import type { ApiClient } from "./api/client.js";
import { AuthGate } from "./auth/AuthGate.js";
import { I18nProvider, type Locale } from "./i18n/i18n.js";
import { useRoute } from "./lib/route.js";
import { AppShell } from "./shell/AppShell.js";
import { ErrorBoundary } from "./ui/ErrorBoundary.js";
import { Skeleton } from "./ui/Skeleton.js";

// Each page is its own chunk: the first screen loads only what it shows.
const ChatPage = lazy(() => import("./chat/ChatPage.js").then((m) => ({ default: m.ChatPage })));
const CorporaPage = lazy(() => import("./corpora/CorporaPage.js").then((m) => ({ default: m.CorporaPage })));
const ModelsPage = lazy(() => import("./models/ModelsPage.js").then((m) => ({ default: m.ModelsPage })));
const KeysPage = lazy(() => import("./keys/KeysPage.js").then((m) => ({ default: m.KeysPage })));
const AuditPage = lazy(() => import("./audit/AuditPage.js").then((m) => ({ default: m.AuditPage })));
const SecurityPage = lazy(() => import("./security/SecurityPage.js").then((m) => ({ default: m.SecurityPage })));

function PageFallback() {
  return (
    <div className="page-pad">
      <Skeleton rows={6} height={24} />
    </div>
  );
}

/** Query defaults: no retries for answers that will not change (4xx). */
export function createQueryClient(): QueryClient {
  return new QueryClient({
    defaultOptions: {
      queries: {
        retry: (count, error) => count < 2 && !(error instanceof ApiError && error.status >= 400 && error.status < 500),
        refetchOnWindowFocus: false,
      },
    },
  });
}

function Pages() {
  const [route] = useRoute();
  return (
    <AppShell page={route.page}>
      <ErrorBoundary resetKey={route.page}>
        <Suspense fallback={<PageFallback />}>
          {route.page === "chat" && <ChatPage conversationId={route.conversationId} />}
          {route.page === "corpora" && <CorporaPage corpusId={route.corpusId} />}
          {route.page === "models" && <ModelsPage />}
          {route.page === "keys" && <KeysPage />}
          {route.page === "audit" && <AuditPage />}
          {route.page === "security" && <SecurityPage />}
        </Suspense>
      </ErrorBoundary>
    </AppShell>
  );
}

export function App({ client, locale }: { client: ApiClient; locale?: Locale }) {
  const [queryClient] = useState(createQueryClient);
  return (
    <ErrorBoundary>
      <I18nProvider initial={locale}>
        <ApiProvider client={client}>
          <QueryClientProvider client={queryClient}>
            <Tooltip.Provider delayDuration={400}>
              <AuthGate>
                <Pages />
              </AuthGate>
            </Tooltip.Provider>
          </QueryClientProvider>
        </ApiProvider>
      </I18nProvider>
    </ErrorBoundary>
  );
}
