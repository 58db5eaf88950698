/**
 * A corpus's index rows (id, document, keyword analysis, language, vector) and keyword
 * statistics as one sealed file, so a large corpus opens from a few large decryptions and
 * Arrow buffers instead of one decryption and one row object per chunk. The chunk store
 * stays the source of truth: a snapshot is used only when it holds exactly the corpus's
 * current chunks (the fingerprint of their ids: chunk ids are never reused and a chunk
 * never changes) and was analysed by the current keyword analysis.
 *
 * Layout: `PSNAP001 | u32 n | sealed header (n bytes) | (u32 n | sealed segment)*`, every
 * length little-endian. The header (JSON) is bound to the corpus; each segment to the
 * header's random nonce, its position and whether it is the last, so segments cannot be
 * dropped, reordered, cut off or spliced in from another snapshot unnoticed. Row segments
 * are Arrow IPC streams; the last segment holds the row count and the term statistics.
 */
import { createHash, randomBytes } from "node:crypto";
import { arrow, type Arrow } from "./lance-modules.js";
import type { DataCipher } from "../../security/data-cipher.js";
import type { SnapshotReader, SnapshotWriter } from "../../store/snapshot-files.js";
import { KEYWORD_ANALYSIS_VERSION } from "./keyword-analysis.js";

const MAGIC = Buffer.from("PSNAP001", "latin1");
const FORMAT = 1;
/** A sealed segment is at most this large (a 10,000-row 1024-dim batch is about 42 MB). */
const MAX_SEGMENT_BYTES = 512 * 1024 * 1024;
/** The columns a snapshot's row segments hold, in this order. */
export const SNAPSHOT_COLUMNS = ["id", "document_id", "terms", "language", "vector"] as const;

interface Header {
  format: number;
  corpusId: string;
  nonce: string;
  analysisVersion: number;
  fingerprint: string;
  dimensions: number;
}

interface Tail {
  rows: number;
  termChunks: [string, number][];
}

/** What a snapshot holds: written from an index, read back into one. */
export interface SnapshotContent {
  /** `fingerprintIds` of the rows' chunk ids. */
  fingerprint: string;
  dimensions: number;
  rows: number;
  /** The rows, in Arrow tables with the `SNAPSHOT_COLUMNS`. */
  batches: AsyncIterable<Arrow.Table>;
  /** In how many chunks each analysed term occurs. */
  termChunks: () => Iterable<[string, number]>;
}

/** Identifies a set of chunk ids; `ids` must come in ascending (binary) order. */
export function fingerprintIds(ids: Iterable<string>): string {
  const hash = createHash("sha256");
  let count = 0;
  for (const id of ids) {
    hash.update(id);
    hash.update("\n");
    count++;
  }
  return `${count}:${hash.digest("hex")}`;
}

const headerAad = (corpusId: string) => `index-snapshot:${corpusId}:header`;
const segmentAad = (corpusId: string, nonce: string, index: number, last: boolean) => `index-snapshot:${corpusId}:${nonce}:${index}:${last ? "end" : "rows"}`;

/** A half-precision float type (what IPC reads back is a `Float` of half precision, not a `Float16`). */
const isHalf = (type: Arrow.DataType | undefined): boolean => arrow.DataType.isFloat(type) && type.precision === arrow.Precision.HALF;

function u32(n: number): Buffer {
  const out = Buffer.alloc(4);
  out.writeUInt32LE(n);
  return out;
}

async function writeFramed(writer: SnapshotWriter, sealed: Buffer): Promise<void> {
  if (sealed.length > MAX_SEGMENT_BYTES) throw new Error("snapshot segment too large");
  await writer.write(u32(sealed.length));
  await writer.write(sealed);
}

/** Writes `content` sealed to `writer` (the caller commits or aborts it). */
export async function writeIndexSnapshot(writer: SnapshotWriter, cipher: DataCipher, corpusId: string, content: SnapshotContent): Promise<void> {
  const nonce = randomBytes(16).toString("hex");
  const header: Header = { format: FORMAT, corpusId, nonce, analysisVersion: KEYWORD_ANALYSIS_VERSION, fingerprint: content.fingerprint, dimensions: content.dimensions };
  await writer.write(MAGIC);
  await writeFramed(writer, cipher.seal(Buffer.from(JSON.stringify(header), "utf8"), headerAad(corpusId)));
  let index = 0;
  let rows = 0;
  for await (const batch of content.batches) {
    if (batch.numRows === 0) continue;
    rows += batch.numRows;
    await writeFramed(writer, cipher.seal(Buffer.from(arrow.tableToIPC(batch.select([...SNAPSHOT_COLUMNS]), "stream")), segmentAad(corpusId, nonce, index++, false)));
  }
  if (rows !== content.rows) throw new Error(`the index changed while its snapshot was written (${rows} rows, expected ${content.rows})`);
  const tail: Tail = { rows, termChunks: [...content.termChunks()] };
  await writeFramed(writer, cipher.seal(Buffer.from(JSON.stringify(tail), "utf8"), segmentAad(corpusId, nonce, index, true)));
}

/** A snapshot whose header was read and verified; its rows are read as they are consumed. */
export interface OpenedSnapshot {
  fingerprint: string;
  dimensions: number;
  analysisVersion: number;
  /** The rows, batch by batch; verified to end with the last segment. */
  batches(): AsyncGenerator<Arrow.Table>;
  /** The term statistics, once `batches` has been consumed to its end. */
  termChunks(): Map<string, number>;
}

/** Reads and verifies a snapshot's header; throws when it is not one of this corpus under this key. */
export async function openIndexSnapshot(reader: SnapshotReader, cipher: DataCipher, corpusId: string): Promise<OpenedSnapshot> {
  const readFramed = async (): Promise<Buffer> => {
    const length = (await reader.read(4)).readUInt32LE();
    if (length > MAX_SEGMENT_BYTES) throw new Error("snapshot segment too large");
    return reader.read(length);
  };
  if (!(await reader.read(MAGIC.length)).equals(MAGIC)) throw new Error("not an index snapshot");
  const header = JSON.parse(cipher.open(await readFramed(), headerAad(corpusId)).toString("utf8")) as Header;
  if (header.format !== FORMAT || header.corpusId !== corpusId) throw new Error("index snapshot of another format or corpus");
  let tail: Tail | null = null;
  return {
    fingerprint: header.fingerprint,
    dimensions: header.dimensions,
    analysisVersion: header.analysisVersion,
    async *batches() {
      let rows = 0;
      for (let index = 0; ; index++) {
        if (reader.remaining() === 0) throw new Error("index snapshot ends before its last segment");
        const sealed = await readFramed();
        const last = reader.remaining() === 0;
        const plain = cipher.open(sealed, segmentAad(corpusId, header.nonce, index, last));
        if (last) {
          tail = JSON.parse(plain.toString("utf8")) as Tail;
          if (tail.rows !== rows) throw new Error("index snapshot rows do not add up");
          return;
        }
        const table = arrow.tableFromIPC(plain);
        const vector = table.schema.fields.find((f) => f.name === "vector")?.type as Arrow.DataType | undefined;
        if (!(vector instanceof arrow.FixedSizeList) || !isHalf(vector.children[0]?.type as Arrow.DataType | undefined) || vector.listSize !== header.dimensions || SNAPSHOT_COLUMNS.some((c) => !table.getChild(c))) throw new Error("index snapshot rows of an unexpected shape");
        rows += table.numRows;
        yield table;
      }
    },
    termChunks() {
      if (!tail) throw new Error("index snapshot rows not read to the end");
      return new Map(tail.termChunks);
    },
  };
}
