/**
 * Index snapshots as opaque bytes, one file per corpus at `<root>/<corpus id>.snap`. This
 * store never sees plaintext: `rag/retrieval/index-snapshot.ts` seals what it writes.
 * A snapshot is written to a temporary file and renamed into place once complete, so a
 * reader finds the previous snapshot, the new one or none, never a part. The shape (a
 * sequential writer committed at the end, ranged sequential reads) is that of an object
 * store's multipart upload and GET, so a shared store can take this one's place.
 */
import { mkdir, open, readdir, rename, rm, type FileHandle } from "node:fs/promises";
import path from "node:path";

const CORPUS_ID = /^corp_[0-9A-Za-z]{24}$/;
const SUFFIX = ".snap";

export interface SnapshotReader {
  readonly size: number;
  /** Exactly `bytes` bytes from where the last read ended; throws on a short read. */
  read(bytes: number): Promise<Buffer>;
  /** How many bytes are left to read. */
  remaining(): number;
  close(): Promise<void>;
}

export interface SnapshotWriter {
  write(bytes: Buffer): Promise<void>;
  /** Makes the written bytes the corpus's snapshot (durably), replacing any previous one. */
  commit(): Promise<void>;
  /** Discards what was written; the previous snapshot, if any, stays. */
  abort(): Promise<void>;
}

export class SnapshotFiles {
  constructor(private readonly root: string) {}

  private pathOf(corpusId: string): string {
    if (!CORPUS_ID.test(corpusId)) throw new Error("invalid corpus id");
    return path.join(this.root, corpusId + SUFFIX);
  }

  /** The corpus's snapshot, or undefined when it has none. */
  async openRead(corpusId: string): Promise<SnapshotReader | undefined> {
    let handle: FileHandle;
    try {
      handle = await open(this.pathOf(corpusId), "r");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
      throw error;
    }
    const size = (await handle.stat()).size;
    let position = 0;
    return {
      size,
      remaining: () => size - position,
      read: async (bytes) => {
        if (bytes < 0 || position + bytes > size) throw new Error("snapshot is shorter than its contents say");
        const out = Buffer.allocUnsafe(bytes);
        let done = 0;
        while (done < bytes) {
          const { bytesRead } = await handle.read(out, done, bytes - done, position + done);
          if (bytesRead === 0) throw new Error("snapshot is shorter than its contents say");
          done += bytesRead;
        }
        position += bytes;
        return out;
      },
      close: () => handle.close(),
    };
  }

  async create(corpusId: string): Promise<SnapshotWriter> {
    const file = this.pathOf(corpusId);
    await mkdir(this.root, { recursive: true, mode: 0o700 });
    const temporary = `${file}.${process.pid}.${Date.now()}.tmp`;
    const handle = await open(temporary, "w", 0o600);
    let closed = false;
    const close = async () => {
      if (!closed) {
        closed = true;
        await handle.close();
      }
    };
    return {
      write: async (bytes) => {
        let done = 0;
        while (done < bytes.length) done += (await handle.write(bytes, done, bytes.length - done)).bytesWritten;
      },
      commit: async () => {
        await handle.sync();
        await close();
        await rename(temporary, file);
      },
      abort: async () => {
        await close().catch(() => undefined);
        await rm(temporary, { force: true });
      },
    };
  }

  async delete(corpusId: string): Promise<void> {
    await rm(this.pathOf(corpusId), { force: true });
  }

  /** The corpora that have a snapshot; leftover temporary files of an interrupted write are removed. */
  async list(): Promise<string[]> {
    const names = await readdir(this.root).catch(() => [] as string[]);
    for (const name of names.filter((n) => n.endsWith(".tmp"))) await rm(path.join(this.root, name), { force: true });
    return names.filter((n) => n.endsWith(SUFFIX) && CORPUS_ID.test(n.slice(0, -SUFFIX.length))).map((n) => n.slice(0, -SUFFIX.length));
  }
}
