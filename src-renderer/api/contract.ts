/** The server's API contract, the only thing of the server the workbench imports (types only). */
export type * from "../../src-server/contract/index.js";
