/**
 * Incoming RLPx frame bodies with native snappy for the `eth` protocol: devp2p's `Peer._handleBody` decrypts a frame
 * (MAC checked by `parseBody`), routes it by message code and uncompresses every payload with snappyjs, which a
 * profile of `npm run bench -- p2p` put at 18% of the follower's main thread (bodies and receipts arrive as
 * megabyte messages). This replacement keeps devp2p's steps and errors for every frame and, for the messages of the
 * node's own `EthWireProtocol` on a v5+ session, uncompresses with `snappy.ts` (the native `snappy` package when it
 * loads) after checking the length the snappy preamble announces against `MAX_MESSAGE_BYTES`: a peer announcing a
 * larger message is told apart before anything that size is allocated (the protocol counts it as oversized).
 * Base-protocol messages (hello, disconnect, ping, pong) and any other sub-protocol go through the same code as in
 * devp2p (snappyjs, the disconnect retry).
 *
 * `installFrameBody()` replaces the exported `Peer` class's method once per thread (each `Peer` looks it up on its
 * prototype when a frame is whole).
 */
import { Peer } from '@ethereumjs/devp2p';
import { DISCONNECT_REASON } from '@ethereumjs/devp2p';
import { RLP } from '@ethereumjs/rlp';
import * as snappyjs from 'snappyjs';
import { EthWireProtocol } from './eth-protocol.js';
import { MAX_MESSAGE_BYTES } from './eth-messages.js';
import { uncompressFast } from './snappy.js';

const HELLO = 0x00;
const DISCONNECT = 0x01;

interface ProtocolEntry {
  readonly protocol: { _handleMessage?: (code: number, payload: Uint8Array | unknown) => void };
  readonly offset: number;
}

interface PeerBody {
  _socketData: Uint8Array;
  _nextPacketSize: number;
  _state: string;
  _hello: { protocolVersion: number } | null;
  _eciesSession: { parseBody(data: Uint8Array): Uint8Array | undefined };
  _getProtocol(code: number): ProtocolEntry | undefined;
  disconnect(reason: DISCONNECT_REASON): void;
  events: { emit(event: 'error', error: unknown): void };
}

/**
 * The uncompressed length a raw snappy block announces (its varint preamble, at most 32 bits), or null when the
 * preamble is cut short or longer than 5 bytes (the decoder then refuses the block itself).
 */
export function snappyLength(block: Uint8Array): number | null {
  let length = 0;
  for (let i = 0; i < 5 && i < block.length; i++) {
    const byte = block[i]!;
    length += (byte & 0x7f) * 2 ** (7 * i);
    if (byte < 0x80) return length;
  }
  return null;
}

/** The payload of one base-protocol or foreign sub-protocol message, as devp2p decodes it. */
function devp2pPayload(peer: PeerBody, protocol: ProtocolEntry['protocol'], msgCode: number, raw: Uint8Array): unknown {
  let payload: Uint8Array | unknown = raw;
  const compressed = peer._hello !== null && peer._hello.protocolVersion >= 5;
  if (compressed) payload = snappyjs.uncompress(raw);
  if (protocol !== (peer as unknown)) return payload;
  try {
    return RLP.decode(payload as Uint8Array);
  } catch (error) {
    // devp2p's retry: a disconnect can arrive compressed or not around the hello exchange.
    if (msgCode !== DISCONNECT) throw error;
    return RLP.decode(compressed ? raw : snappyjs.uncompress(raw));
  }
}

let installed = false;

export function installFrameBody(): void {
  if (installed) return;
  installed = true;
  const proto = Peer.prototype as unknown as { _handleBody: (this: PeerBody) => void };
  proto._handleBody = function handleBody(this: PeerBody) {
    const bytesCount = this._nextPacketSize;
    const body = this._eciesSession.parseBody(this._socketData.subarray(0, bytesCount));
    if (!body) return;
    this._state = 'Header';
    this._nextPacketSize = 32;
    let code = body[0]!;
    if (code === 0x80) code = 0;
    if (code !== HELLO && code !== DISCONNECT && this._hello === null) {
      this.disconnect(DISCONNECT_REASON.PROTOCOL_ERROR);
      return;
    }
    const entry = this._getProtocol(code);
    if (entry === undefined) {
      this.disconnect(DISCONNECT_REASON.PROTOCOL_ERROR);
      return;
    }
    const msgCode = code - entry.offset;
    try {
      const raw = body.subarray(1);
      const { protocol } = entry;
      if (protocol instanceof EthWireProtocol) {
        if (this._hello !== null && this._hello.protocolVersion >= 5) {
          const announced = snappyLength(raw);
          if (announced !== null && announced > MAX_MESSAGE_BYTES) protocol._handleOversized(msgCode, announced);
          else protocol._handleMessage(msgCode, uncompressFast(raw));
        } else {
          protocol._handleMessage(msgCode, raw);
        }
      } else {
        protocol._handleMessage?.(msgCode, devp2pPayload(this, protocol, msgCode, raw));
      }
    } catch (error) {
      this.disconnect(DISCONNECT_REASON.SUBPROTOCOL_ERROR);
      this.events.emit('error', error);
    }
    this._socketData = this._socketData.subarray(bytesCount);
  };
}
