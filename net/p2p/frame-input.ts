/**
 * Socket input of devp2p's RLPx `Peer` without the quadratic copy: devp2p appends every TCP chunk to its buffered
 * bytes (`concatBytes(buffered, chunk)`) and then parses, so a 1 MB frame arriving in 64 KB chunks is copied about
 * 8 MB over before it is whole. This wrapper holds chunks aside while they cannot complete the packet devp2p waits
 * for (`_nextPacketSize`), then hands them over as one buffer, so each byte is copied at most twice. Parsing,
 * MAC checks and errors stay devp2p's own. `installFrameInput()` wraps the exported class's method once per thread
 * (each `Peer` binds it when constructed).
 */
import { Peer } from '@ethereumjs/devp2p';

interface PeerInput {
  _closed: boolean;
  _socketData: Uint8Array;
  _nextPacketSize: number;
}

const held = new WeakMap<object, { chunks: Uint8Array[]; bytes: number }>();

let installed = false;

export function installFrameInput(): void {
  if (installed) return;
  installed = true;
  const proto = Peer.prototype as unknown as { _onSocketData: (this: PeerInput, data: Uint8Array) => void };
  const original = proto._onSocketData;
  proto._onSocketData = function onSocketData(this: PeerInput, data: Uint8Array) {
    if (this._closed) return;
    let pending = held.get(this);
    if (!pending) {
      pending = { chunks: [], bytes: 0 };
      held.set(this, pending);
    }
    if (this._socketData.length + pending.bytes + data.length < this._nextPacketSize) {
      pending.chunks.push(data);
      pending.bytes += data.length;
      return;
    }
    if (pending.chunks.length === 0) {
      original.call(this, data);
      return;
    }
    const whole = Buffer.concat([...pending.chunks, data]);
    pending.chunks = [];
    pending.bytes = 0;
    original.call(this, whole);
  };
}
