/** The preload bridge's types live with the workbench's other contract (shared with the renderer). */
export type * from "../src-server/contract/desktop-bridge.js";
