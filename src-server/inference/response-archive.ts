/**
 * Stored responses of the Responses API, per workspace: what a later request names as
 * `previous_response_id` to continue from, and what `GET /v1/responses/{id}` returns.
 * Each is sealed under a data key of its own (as conversations are); deleting it, or its
 * retention ending, deletes the key with it, so nothing left on disk can be opened. The
 * archive holds what the wire layer gives it as opaque JSON, plus the conversation in
 * engine terms; another workspace's response does not exist for the caller.
 */
import type { Principal } from "../domain/scopes.js";
import type { ChatMessage } from "../engine/types.js";
import { notFound } from "../errors.js";
import { nowSeconds } from "../ids.js";
import type { DataKeyring } from "../security/data-keyring.js";
import type { ResponseStore } from "../store/response-store.js";

export interface ArchivedResponse {
  /** The response object as it was answered (wire JSON, opaque here). */
  response: unknown;
  /** The request's input items as the client sent them (wire JSON), for `input_items`. */
  inputItems: unknown[];
  /** The conversation up to and including this response, without instructions. */
  transcript: ChatMessage[];
}

export interface ResponseArchiveOptions {
  /** Days a stored response is kept; 0 = until deleted. */
  retentionDays: number;
  now?: () => number;
}

export class ResponseArchive {
  private readonly now: () => number;

  constructor(
    private readonly store: ResponseStore,
    private readonly keyring: DataKeyring,
    private readonly options: ResponseArchiveOptions,
  ) {
    this.now = options.now ?? nowSeconds;
  }

  async save(principal: Principal, id: string, archived: ArchivedResponse): Promise<void> {
    const key = await this.keyring.create(id);
    const cipher = await this.keyring.cipher(id);
    const createdAt = this.now();
    await this.store.insert({
      id,
      workspaceId: principal.workspaceId,
      keyProvider: key.provider,
      wrappedKey: key.wrappedKey,
      body: cipher.seal(Buffer.from(JSON.stringify(archived), "utf8"), `response:${id}`),
      createdAt,
      expiresAt: this.options.retentionDays > 0 ? createdAt + this.options.retentionDays * 86_400 : null,
    });
  }

  /** 404 `response_not_found` when it was never stored, was deleted, has expired or is another workspace's. */
  async load(principal: Principal, id: string, param = "response_id"): Promise<ArchivedResponse> {
    const record = await this.store.get(principal.workspaceId, id, this.now());
    if (!record) throw notFound(`No stored response '${id}' (responses made with store: false are not kept; stored ones are kept ${this.options.retentionDays > 0 ? `${this.options.retentionDays} days` : "until deleted"})`, "response_not_found", param);
    const cipher = await this.keyring.cipher(id);
    return JSON.parse(cipher.open(record.body, `response:${id}`).toString("utf8")) as ArchivedResponse;
  }

  /** Irreversible: the response and its key. */
  async delete(principal: Principal, id: string): Promise<void> {
    if (!(await this.store.delete(principal.workspaceId, id))) throw notFound(`No stored response '${id}'`, "response_not_found", "response_id");
    this.keyring.forget(id);
  }

  /** Deletes responses whose retention has ended (with their keys); returns how many. */
  async purgeExpired(): Promise<number> {
    const ids = await this.store.deleteExpired(this.now());
    for (const id of ids) this.keyring.forget(id);
    return ids.length;
  }
}
