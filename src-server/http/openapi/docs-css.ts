/**
 * The `/docs` page's one style sheet, inlined in the page and allowed by its hash. System
 * fonts only (nothing fetched); light and dark by `prefers-color-scheme`, both with text at
 * WCAG AA contrast or better; a visible focus ring for keyboard users.
 */
export const DOCS_CSS = `
:root{color-scheme:light dark;--bg:#ffffff;--fg:#1b1f24;--muted:#4f5862;--line:#d5dae0;--panel:#f4f6f8;--link:#0b57d0;--code:#f0f2f5;
--get:#0a6b2e;--post:#0b57d0;--patch:#8a4b00;--put:#8a4b00;--delete:#b3261e;--focus:#e37400;--req:#9b1c1c}
@media (prefers-color-scheme:dark){:root{--bg:#15181c;--fg:#e6e9ed;--muted:#aab3bd;--line:#343a42;--panel:#1d2126;--link:#8ab4f8;--code:#262b31;
--get:#6dd58c;--post:#8ab4f8;--patch:#f6b26b;--put:#f6b26b;--delete:#f28b82;--focus:#fbbc04;--req:#f28b82}}
*{box-sizing:border-box}
html{scroll-padding-top:1rem}
body{margin:0;background:var(--bg);color:var(--fg);font:15px/1.55 system-ui,-apple-system,"Segoe UI",Roboto,"Noto Sans",sans-serif}
a{color:var(--link)}
a:focus-visible,main:focus-visible{outline:3px solid var(--focus);outline-offset:2px}
code{font-family:ui-monospace,"SFMono-Regular","DejaVu Sans Mono",Menlo,Consolas,monospace;font-size:.9em;background:var(--code);padding:.05em .3em;border-radius:4px;overflow-wrap:anywhere}
.skip{position:absolute;left:.5rem;top:-3rem;background:var(--bg);padding:.4rem .7rem;border:2px solid var(--focus);z-index:2}
.skip:focus{top:.5rem}
header{padding:1.2rem 1.5rem .8rem;border-bottom:1px solid var(--line)}
header h1{margin:0 0 .2rem;font-size:1.6rem}
header p{margin:.2rem 0;max-width:70rem}
.meta{color:var(--muted)}
.layout{display:grid;grid-template-columns:20rem minmax(0,1fr)}
.toc{position:sticky;top:0;align-self:start;max-height:100vh;overflow:auto;padding:1rem 1rem 2rem 1.5rem;border-right:1px solid var(--line);background:var(--panel);font-size:.86rem}
.toc h2{font-size:1rem;margin:0 0 .5rem}
.toc ul{list-style:none;margin:0;padding:0}
.toc li{margin:.1rem 0}
.toc ul ul{margin:.2rem 0 .7rem .2rem}
.toc ul ul a{text-decoration:none;color:var(--fg);display:grid;grid-template-columns:4rem minmax(0,1fr);gap:.4rem;align-items:baseline;padding:.05rem .2rem;border-radius:4px}
.toc ul ul a:hover{background:var(--code)}
.toc code{background:none;padding:0;overflow-wrap:normal}
.toc-tag{font-weight:600}
.count{color:var(--muted)}
main{padding:1rem 2rem 4rem;min-width:0}
main>section>h2{font-size:1.35rem;margin:2rem 0 .5rem;padding-bottom:.3rem;border-bottom:2px solid var(--line)}
.op{border:1px solid var(--line);border-radius:8px;padding:.2rem 1rem .7rem;margin:1rem 0;background:var(--bg)}
.op h3{font-size:1.02rem;margin:.7rem 0 .3rem;display:flex;flex-wrap:wrap;gap:.5rem;align-items:baseline}
.op h3 .path{font-size:1rem;background:none;padding:0}
.op h4{font-size:.9rem;margin:.9rem 0 .3rem;color:var(--muted);text-transform:uppercase;letter-spacing:.04em}
.anchor{color:var(--muted);text-decoration:none;font-weight:400}
.anchor:hover,.anchor:focus-visible{color:var(--link)}
.summary{margin:.2rem 0;font-weight:500}
.credential{margin:.3rem 0;color:var(--muted)}
.credential strong{color:var(--fg)}
.method{display:inline-block;min-width:3.6rem;text-align:center;font:700 .74rem/1.7 ui-monospace,"DejaVu Sans Mono",monospace;border:1.5px solid currentColor;border-radius:4px;padding:0 .3rem}
.m-get{color:var(--get)}.m-post{color:var(--post)}.m-patch{color:var(--patch)}.m-put{color:var(--put)}.m-delete{color:var(--delete)}
table{border-collapse:collapse;width:100%;font-size:.9rem}
th,td{text-align:left;vertical-align:top;border-top:1px solid var(--line);padding:.35rem .5rem}
thead th{border-top:none;color:var(--muted);font-weight:600}
td p,td .schema-type{margin:0}
.fields,.variants{margin:.2rem 0 .2rem .2rem;padding-left:1.1rem;font-size:.9rem}
.fields{list-style:square}
.fields li,.variants li{margin:.2rem 0}
.field{font-weight:600}
.type{color:var(--muted)}
.required{color:var(--req);font-size:.8rem;font-weight:600}
.bounds{color:var(--muted);font-size:.85rem}
.desc{display:block}
.schema-type{margin:.2rem 0}
.content-type{margin:.2rem 0;color:var(--muted);font-size:.85rem}
.responses{display:grid;grid-template-columns:max-content 1fr;gap:.2rem .8rem;margin:.2rem 0}
.responses dt{font-weight:600}
.responses dd{margin:0}
dl{margin:.3rem 0}
@media (max-width:900px){.layout{display:block}.toc{position:static;max-height:none;border-right:none;border-bottom:1px solid var(--line)}main{padding:1rem}}
@media print{.toc,.skip,.anchor{display:none}.layout{display:block}}
`;
