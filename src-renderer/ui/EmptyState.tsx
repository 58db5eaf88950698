/** A designed empty state: an icon, what this place is for, and the next step. */
import type { LucideIcon } from "lucide-react";
import type { ReactNode } from "react";

/** `titleLevel`: 3 inside a section that has its own h2. */
export function EmptyState({ icon: Icon, title, children, actions, titleLevel = 2 }: { icon: LucideIcon; title: string; children?: ReactNode; actions?: ReactNode; titleLevel?: 2 | 3 }) {
  const Title = titleLevel === 3 ? "h3" : "h2";
  return (
    <div className="empty-state">
      <div className="empty-icon" aria-hidden="true">
        <Icon size={28} strokeWidth={1.6} />
      </div>
      <Title className="empty-title">{title}</Title>
      {children && <div className="empty-body">{children}</div>}
      {actions && <div className="empty-actions">{actions}</div>}
    </div>
  );
}
