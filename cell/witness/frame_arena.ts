/**
 * Where witnesses' frames are copied for their sinks. A frame of its own (`ByteWriter.toBytes`) costs an
 * ArrayBuffer with its own backing store, which V8 allocates and tracks at several times the cost of the copy; here
 * a frame is a view of a shared 64 KiB buffer, and a new buffer is started when one is full. A frame stays valid
 * as long as its holder keeps it (nothing is ever written over), and a buffer is collected with its last frame.
 * The buffer in use is process scratch (core/scratch.ts).
 */
import type { ByteWriter } from "../../core/def/mod.ts";
import { ARENA_BYTES, scratch } from "../../core/scratch.ts";

/** Frames bigger than this get their own buffer, so that one does not waste most of an arena. */
const OWN_BUFFER_ABOVE = 8 * 1024;

/** A copy of what `w` holds, for a sink to keep. */
export function frameOf(w: ByteWriter): Uint8Array {
  const n = w.pos;
  if (n > OWN_BUFFER_ABOVE) return w.toBytes();
  const s = scratch.arena;
  if (s.used + n > ARENA_BYTES) {
    s.arena = new ArrayBuffer(ARENA_BYTES);
    s.bytes = new Uint8Array(s.arena);
    s.used = 0;
  }
  const src = w.buf;
  s.bytes.set(new Uint8Array(src.buffer, src.byteOffset, n), s.used);
  const frame = new Uint8Array(s.arena, s.used, n);
  s.used += n;
  return frame;
}
