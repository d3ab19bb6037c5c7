/**
 * The `eth` sub-protocol on @ethereumjs/devp2p's RLPx: one class for eth/68 and eth/69 (devp2p's own `ETH` stops at
 * eth/68 and decodes messages itself). Each message's payload arrives after snappy (`frame-body.ts`, native); this
 * class passes the raw payload bytes to its listener, so decoding and validation stay in `eth-messages.ts` and `session.ts`. Outgoing
 * messages are compressed by `snappy.ts` (native when it loads).
 */
import type { Capabilities, Peer } from '@ethereumjs/devp2p';
import { compress } from './snappy.js';
import { ETH_MESSAGE_SPACE, MAX_MESSAGE_BYTES, type EthVersion } from './eth-messages.js';

type SendMethod = (code: number, data: Uint8Array) => unknown;

/** One message's payload; null when the peer announced one above `MAX_MESSAGE_BYTES` (`size`), left undecoded. */
export type EthMessageListener = (code: number, payload: Uint8Array | null, size: number) => void;

/** devp2p's Peer instantiates a capability's constructor as `new C(version, peer, send)` and calls `_handleMessage`. */
export class EthWireProtocol {
  readonly version: EthVersion;
  readonly peer: Peer;
  private readonly sendRaw: SendMethod;
  private listener: EthMessageListener | null = null;
  private readonly early: [number, Uint8Array | null, number][] = [];

  constructor(version: number, peer: Peer, send: SendMethod) {
    if (version !== 68 && version !== 69) throw new Error(`eth/${version} is not spoken by this node`);
    this.version = version;
    this.peer = peer;
    this.sendRaw = send;
  }

  /** Receives every message of this protocol; messages that arrived before a listener was set are replayed. */
  listen(listener: EthMessageListener): void {
    this.listener = listener;
    for (const [code, payload, size] of this.early.splice(0)) listener(code, payload, size);
  }

  _handleMessage(code: number, data: Uint8Array): void {
    this.deliver(code, data, data.length);
  }

  /** A message whose snappy preamble announced `size` bytes, above the limit (`frame-body.ts`): not uncompressed. */
  _handleOversized(code: number, size: number): void {
    this.deliver(code, null, size);
  }

  private deliver(code: number, payload: Uint8Array | null, size: number): void {
    if (this.listener) this.listener(code, payload, size);
    else if (this.early.length < 16) this.early.push([code, payload, size]);
  }

  /** Sends one message (payload = its RLP), snappy-compressed when the peer's base protocol is v5+. */
  send(code: number, payload: Uint8Array): void {
    if (payload.length > MAX_MESSAGE_BYTES) throw new Error(`eth message 0x${code.toString(16)} of ${payload.length} bytes is above ${MAX_MESSAGE_BYTES}`);
    const hello = this.peer.getHelloMessage();
    this.sendRaw(code, hello !== null && hello.protocolVersion >= 5 ? compress(payload) : payload);
  }
}

const asCapability = (version: EthVersion): Capabilities =>
  ({ name: 'eth', version, length: ETH_MESSAGE_SPACE[version], constructor: EthWireProtocol as unknown as Capabilities['constructor'] });

export const ETH68_CAPABILITY = asCapability(68);
export const ETH69_CAPABILITY = asCapability(69);
