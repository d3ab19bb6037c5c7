/**
 * Just enough of the SSE wire format for the load clients: split a stream's text into frames, and
 * read a change frame's sequence and `emittedAt` without parsing its JSON (a process reading
 * tens of thousands of frames a second cannot afford a full parse per frame). Change frames are the ones with an `id:` line;
 * `hello`, `reset_required` and heartbeat comments have none.
 */

export interface ChangeFrame {
  readonly sequence: number;
  /** `Date.parse(envelope.emittedAt)`. */
  readonly emittedAtMs: number;
}

/** Accumulates stream text and hands back each complete frame once. */
export class FrameSplitter {
  private pending = '';

  push(text: string): string[] {
    const parts = (this.pending + text).split('\n\n');
    this.pending = parts.pop() ?? '';
    return parts;
  }
}

export function changeOfFrame(frame: string): ChangeFrame | null {
  if (!frame.startsWith('id: ')) return null;
  // `sequence` leads the envelope and `emittedAt` ends it: search each from its own end.
  const emittedAt = quotedField(frame, frame.lastIndexOf('"emittedAt":"'), '"emittedAt":"');
  const sequence = quotedField(frame, frame.indexOf('"sequence":"'), '"sequence":"');
  if (emittedAt === null || sequence === null) throw new Error(`change frame without emittedAt or sequence: ${frame.slice(0, 200)}`);
  return { sequence: Number(sequence), emittedAtMs: parseTime(emittedAt) };
}

/** Every stream receives the same change: its time is parsed once, not once per stream. */
let lastTime = { text: '', ms: NaN };

function parseTime(text: string): number {
  if (text !== lastTime.text) lastTime = { text, ms: Date.parse(text) };
  return lastTime.ms;
}

function quotedField(frame: string, start: number, marker: string): string | null {
  if (start < 0) return null;
  const from = start + marker.length;
  const end = frame.indexOf('"', from);
  return end < 0 ? null : frame.slice(from, end);
}
