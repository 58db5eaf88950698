/** One card of the Security page: an icon, a heading that names the region, and its content. */
import type { ReactNode } from "react";

export function SecurityCard({ icon, title, children, id }: { icon: ReactNode; title: string; children: ReactNode; id: string }) {
  return (
    <section className="card security-card" aria-labelledby={id}>
      <div className="security-card-head">
        <span className="security-icon" aria-hidden="true">
          {icon}
        </span>
        <h2 id={id}>{title}</h2>
      </div>
      {children}
    </section>
  );
}
