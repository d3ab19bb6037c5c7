/**
 * Socket input of devp2p's RLPx `Peer` without its copies: devp2p appends every TCP chunk to its buffered bytes
 * (`concatBytes(buffered, chunk)`, a zero-filled copy even when nothing was buffered) and then parses, so a 1 MB
 * frame arriving in 64 KB chunks was copied about 8 MB over before it was whole. This replacement holds chunks aside
 * while they cannot complete the packet devp2p waits for (`_nextPacketSize`), then joins what is buffered and the
 * held chunks in one copy (none when a single chunk completes it and nothing was buffered), and runs devp2p's own
 * parsing loop over it: the same handlers (`_handleAuth`, `_handleAck`, `_handleHeader`, `_handleBody`) in the same
 * order, the same disconnect and `error` event when one throws. `installFrameInput()` replaces the exported class's
 * method once per thread (each `Peer` binds it when constructed).
 */
import { DISCONNECT_REASON, Peer } from '@ethereumjs/devp2p';

interface PeerInput {
  _closed: boolean;
  _socketData: Uint8Array;
  _nextPacketSize: number;
  _state: 'Auth' | 'Ack' | 'Header' | 'Body';
  _handleAuth(): void;
  _handleAck(): void;
  _handleHeader(): void;
  _handleBody(): void;
  disconnect(reason: DISCONNECT_REASON): void;
  DEBUG: boolean;
  _logger(message: string): void;
  events: { emit(event: 'error', error: unknown): void };
}

const held = new WeakMap<object, { chunks: Uint8Array[]; bytes: number }>();

/** `bytes` as a plain Uint8Array over the same memory (devp2p's buffers are plain arrays, never Node Buffers). */
const plain = (bytes: Uint8Array): Uint8Array => (bytes.constructor === Uint8Array ? bytes : new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.length));

/** What is buffered, then `chunks`, as one array: no copy when only one of them has bytes. */
function joined(buffered: Uint8Array, chunks: readonly Uint8Array[]): Uint8Array {
  const parts = buffered.length === 0 ? chunks : [buffered, ...chunks];
  if (parts.length === 1) return plain(parts[0]!);
  return plain(Buffer.concat(parts));
}

let installed = false;

export function installFrameInput(): void {
  if (installed) return;
  installed = true;
  const proto = Peer.prototype as unknown as { _onSocketData: (this: PeerInput, data: Uint8Array) => void };
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
    pending.chunks.push(data);
    this._socketData = joined(this._socketData, pending.chunks);
    pending.chunks = [];
    pending.bytes = 0;
    // devp2p's loop, unchanged.
    try {
      while (this._socketData.length >= this._nextPacketSize) {
        switch (this._state) {
          case 'Auth':
            this._handleAuth();
            break;
          case 'Ack':
            this._handleAck();
            break;
          case 'Header':
            this._handleHeader();
            break;
          case 'Body':
            this._handleBody();
            break;
        }
      }
    } catch (err) {
      this.disconnect(DISCONNECT_REASON.SUBPROTOCOL_ERROR);
      if (this.DEBUG) this._logger(`Error on peer socket data handling: ${err}`);
      this.events.emit('error', err);
    }
  };
}
