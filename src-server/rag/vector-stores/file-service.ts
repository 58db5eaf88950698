/**
 * OpenAI's Files (`/v1/files`): files uploaded to a workspace, sealed at rest under a data
 * key of each file's own (wrapped by the key provider, stored with the file's record) and
 * kept until deleted or their expiry. A file is in no corpus until it is attached to a
 * vector store; then its bytes are copied, sealed under the corpus key, as the document's
 * original (`vector-store-file-service.ts`), so a file and a corpus each keep their own
 * lifecycle (deleting a store buries its documents; the files stay until deleted).
 */
import { createHash } from "node:crypto";
import type { Readable } from "node:stream";
import type { Clock } from "../../domain/clock.js";
import { secondsOf } from "../../domain/clock.js";
import type { Principal } from "../../domain/scopes.js";
import { notFound } from "../../errors.js";
import type { DataKeyring } from "../../security/data-keyring.js";
import type { FileBlobStorage } from "../../store/file-blob-store.js";
import type { OpenAiFileRecord, OpenAiFileStore } from "../../store/openai-file-store.js";
import type { Page, PageRequest } from "../../store/pagination.js";
import { cleanFilename } from "../document-service.js";
import { newFileId } from "./vector-store-ids.js";

/** Purposes a file may be uploaded for: those whose files can go into vector stores. */
export const FILE_PURPOSES = ["assistants", "user_data"] as const;
export type FilePurpose = (typeof FILE_PURPOSES)[number];

/** A file streamed into storage, not yet a file record (its purpose may come after it in the form). */
export interface StagedUpload {
  id: string;
  filename: string;
  bytes: number;
  sha256: string;
  key: { provider: string; wrappedKey: Buffer };
}

export interface UploadRejection {
  filename: string;
  error: { code: "file_too_large" | "empty_file"; message: string };
  bytes: number;
}

export interface FileServiceDeps {
  files: OpenAiFileStore;
  blobs: FileBlobStorage;
  /** Data keys of files, looked up in their records. */
  keyring: DataKeyring;
  clock: Clock;
  maxFileBytes: number;
}

/** What `/v1/files/{id}` answers for a file the caller has no such file: OpenAI's wording. */
export const noSuchFile = (id: string) => notFound(`No such File object: ${id}`, "file_not_found", "id");

const aadOf = (fileId: string) => `openai-file:${fileId}`;

export class FileService {
  /** Removes a file from every vector store it is attached to; set by the vector stores (a file deleted leaves them all). */
  private detach: (fileId: string) => Promise<void> = () => Promise.resolve();

  constructor(private readonly deps: FileServiceDeps) {}

  /** The vector stores' clean-up when a file is deleted or expires. */
  onDelete(detach: (fileId: string) => Promise<void>): void {
    this.detach = detach;
  }

  private now(): number {
    return secondsOf(this.deps.clock);
  }

  /** Streams one file into sealed storage while hashing and measuring it. `isTruncated` says the multipart parser cut it at the size limit. */
  async stage(filename: string, source: Readable, isTruncated: () => boolean): Promise<StagedUpload | UploadRejection> {
    const id = newFileId();
    const name = cleanFilename(filename);
    const key = await this.deps.keyring.create(id);
    const cipher = await this.deps.keyring.cipher(id);
    const hash = createHash("sha256");
    let bytes = 0;
    const { header, cipher: gcm } = cipher.sealStream(aadOf(id));
    async function* sealed(): AsyncGenerator<Buffer> {
      yield header;
      for await (const chunk of source as AsyncIterable<Buffer>) {
        hash.update(chunk);
        bytes += chunk.length;
        const out = gcm.update(chunk);
        if (out.length > 0) yield out;
      }
      const last = gcm.final();
      if (last.length > 0) yield last;
      yield gcm.getAuthTag();
    }
    try {
      await this.deps.blobs.write(id, sealed());
    } catch (error) {
      await this.discard({ id });
      throw error;
    }
    if (isTruncated() || bytes > this.deps.maxFileBytes) {
      await this.discard({ id });
      return { filename: name, bytes, error: { code: "file_too_large", message: `File is too large: the limit is ${this.deps.maxFileBytes} bytes.` } };
    }
    if (bytes === 0) {
      await this.discard({ id });
      return { filename: name, bytes, error: { code: "empty_file", message: "File is empty." } };
    }
    return { id, filename: name, bytes, sha256: hash.digest("hex"), key };
  }

  /** Makes a staged upload a file of the caller's workspace. `expiresAfterSeconds` counts from now (null: kept until deleted). */
  async commit(principal: Principal, staged: StagedUpload, purpose: FilePurpose, expiresAfterSeconds: number | null): Promise<OpenAiFileRecord> {
    const createdAt = this.now();
    const record: OpenAiFileRecord = {
      id: staged.id,
      workspaceId: principal.workspaceId,
      filename: staged.filename,
      purpose,
      bytes: staged.bytes,
      sha256: staged.sha256,
      createdAt,
      expiresAt: expiresAfterSeconds === null ? null : createdAt + expiresAfterSeconds,
    };
    await this.deps.files.insert(record, staged.key);
    return record;
  }

  /** Removes a staged upload that will not become a file. */
  async discard(staged: Pick<StagedUpload, "id">): Promise<void> {
    await this.deps.blobs.delete(staged.id);
    this.deps.keyring.forget(staged.id);
  }

  async get(principal: Principal, id: string): Promise<OpenAiFileRecord> {
    const file = await this.deps.files.get(principal.workspaceId, id, this.now());
    if (!file) throw noSuchFile(id);
    return file;
  }

  list(principal: Principal, page: PageRequest, purpose?: string): Promise<Page<OpenAiFileRecord>> {
    return this.deps.files.list(principal.workspaceId, page, this.now(), purpose);
  }

  /** The file's bytes as uploaded (opened and checked: a blob altered at rest fails here). */
  async content(principal: Principal, id: string): Promise<{ file: OpenAiFileRecord; bytes: Buffer }> {
    const file = await this.get(principal, id);
    return { file, bytes: await this.read(file.id) };
  }

  /** The plaintext of a stored file (for attaching it to a vector store). */
  async read(id: string): Promise<Buffer> {
    const sealed = await this.deps.blobs.read(id);
    if (!sealed) throw noSuchFile(id);
    const cipher = await this.deps.keyring.cipher(id);
    return cipher.openStreamed(sealed, aadOf(id));
  }

  /** Deletes the file and removes it from every vector store (as OpenAI's does). */
  async delete(principal: Principal, id: string): Promise<{ id: string }> {
    const file = await this.get(principal, id);
    await this.destroy(file.id);
    return { id: file.id };
  }

  /** Deletes files whose expiry passed (hourly, with the other purges); returns how many. */
  async purgeExpired(): Promise<number> {
    const ids = await this.deps.files.expired(this.now());
    for (const id of ids) await this.destroy(id);
    return ids.length;
  }

  /** Removes sealed bytes that belong to no file (an upload cut off before its record). Run at start, on a lone server. */
  async sweepOrphans(): Promise<number> {
    let removed = 0;
    for (const id of await this.deps.blobs.list()) {
      if (await this.deps.files.getAny(id)) continue;
      await this.deps.blobs.delete(id);
      removed++;
    }
    return removed;
  }

  /** Out of every store first, then the record with its key (the bytes are unreadable from then), then the bytes. */
  private async destroy(id: string): Promise<void> {
    await this.detach(id);
    await this.deps.files.delete(id);
    this.deps.keyring.forget(id);
    await this.deps.blobs.delete(id);
  }
}
