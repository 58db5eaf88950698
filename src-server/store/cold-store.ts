/**
 * Cold storage for tombstones: what a deletion takes out of primary storage, kept sealed
 * (chunk ciphertext and encrypted vectors exactly as stored, stored originals as sealed
 * files, a sealed manifest of the deleted records) until the retention window ends. It
 * never sees plaintext or keys. The local implementation is `SqliteColdStore`; an object
 * store (S3 and the like) can implement the same interface: every write is idempotent
 * (writing the same tombstone again overwrites it) and durable when its promise
 * resolves, which is what makes a deletion safe to retry after a crash.
 */
import type { Readable } from "node:stream";
import type { SealedChunk } from "./chunk-store.js";

/** What a tombstone holds in cold storage. */
export interface ColdContents {
  chunks: number;
  blobs: number;
  /** Bytes of chunk ciphertext, encrypted vectors, sealed originals and the manifest. */
  bytes: number;
}

export interface ColdStore {
  /** Where the tombstones are, for logs (never request input). */
  readonly location: string;
  /** Stores sealed chunk rows under a tombstone; the same chunk again overwrites it. */
  putChunks(tombstoneId: string, chunks: readonly SealedChunk[]): Promise<void>;
  /** Stores the tombstone's sealed manifest (its deleted records), replacing any earlier one. */
  putManifest(tombstoneId: string, sealed: Buffer): Promise<void>;
  /** Stores a sealed original as it streams; resolves to its size once it is durable. */
  putBlob(tombstoneId: string, documentId: string, source: Readable): Promise<number>;
  /** A page of the tombstone's chunks in id order, after `after`. */
  readChunks(tombstoneId: string, page: { after?: string; limit: number }): Promise<SealedChunk[]>;
  readManifest(tombstoneId: string): Promise<Buffer | undefined>;
  readBlob(tombstoneId: string, documentId: string): Promise<Buffer | undefined>;
  stat(tombstoneId: string): Promise<ColdContents>;
  /** Every tombstone id with something stored. */
  ids(): Promise<string[]>;
  /** Destroys everything stored under the tombstone; idempotent. Resolves to what was destroyed. */
  destroy(tombstoneId: string): Promise<ColdContents>;
  /** Gives freed space back and flushes logs, so destroyed bytes linger in no file. */
  compact(): Promise<void>;
  /** Idempotent. */
  close(): Promise<void>;
}
