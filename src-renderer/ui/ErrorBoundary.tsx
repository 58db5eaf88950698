/** Never a blank screen: a render error shows what happened and a way back. */
import { Component, type ErrorInfo, type ReactNode } from "react";
import { translate, storedLocale } from "../i18n/i18n.js";

interface State {
  error: Error | null;
}

export class ErrorBoundary extends Component<{ children: ReactNode; resetKey?: unknown }, State> {
  override state: State = { error: null };

  static getDerivedStateFromError(error: Error): State {
    return { error };
  }

  override componentDidCatch(error: Error, info: ErrorInfo): void {
    console.error("Pustaka workbench error", error, info.componentStack);
  }

  override componentDidUpdate(prev: { resetKey?: unknown }): void {
    if (this.state.error && prev.resetKey !== this.props.resetKey) this.setState({ error: null });
  }

  override render(): ReactNode {
    const { error } = this.state;
    if (!error) return this.props.children;
    const locale = storedLocale();
    return (
      <div className="crash" role="alert">
        <h1>{translate(locale, "crash.title")}</h1>
        <p>{translate(locale, "crash.body")}</p>
        <pre className="crash-detail">{error.message}</pre>
        <div className="crash-actions">
          <button type="button" className="btn btn-primary" onClick={() => this.setState({ error: null })}>
            {translate(locale, "common.retry")}
          </button>
          <button type="button" className="btn" onClick={() => window.location.reload()}>
            {translate(locale, "crash.reload")}
          </button>
        </div>
      </div>
    );
  }
}
