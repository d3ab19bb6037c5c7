/**
 * A consensus-layer libp2p host: TCP, noise, yamux (and mplex, which the spec requires) (libp2p 2.9 with the matching @libp2p/tcp, @chainsafe/libp2p-noise
 * and -yamux; libp2p 3.x needs Node 22), identify (so gossipsub learns which peers speak it) and gossipsub with the
 * consensus p2p interface's settings: `StrictNoSign`, the Altair `message-id`
 * (`SHA256(MESSAGE_DOMAIN_VALID_SNAPPY ‖ uint64(len(topic)) ‖ topic ‖ snappy_decompress(data))[:20]`), snappy block
 * compression of message data, mesh D = 8 (6..12), heartbeat 700 ms. The host's key is a secp256k1 key, the same one
 * its discv5 record is signed with, so peers derive its peer id from its ENR.
 */
import './promise-with-resolvers.js';
import { createLibp2p, type Libp2p } from 'libp2p';
import { tcp } from '@libp2p/tcp';
import { noise } from '@chainsafe/libp2p-noise';
import { yamux } from '@chainsafe/libp2p-yamux';
import { mplex } from '@libp2p/mplex';
import { identify } from '@libp2p/identify';
import { gossipsub, type GossipsubEvents } from '@chainsafe/libp2p-gossipsub';
import { privateKeyFromRaw } from '@libp2p/crypto/keys';
import type { PubSub } from '@libp2p/interface';
import { sha256 } from '@noble/hashes/sha2.js';
import { compress, uncompress } from '../../p2p/snappy.js';
import { MAX_PAYLOAD_SIZE } from './req-resp.js';
import { concat } from './snappy-frames.js';

const MESSAGE_DOMAIN_VALID_SNAPPY = Uint8Array.of(1, 0, 0, 0);

export type ConsensusHost = Libp2p<{ identify: unknown; pubsub: PubSub<GossipsubEvents> }>;

export interface ConsensusHostOptions {
  /** 32-byte secp256k1 private key. */
  readonly privateKey: Uint8Array;
  readonly host: string;
  /** TCP port (0: a free one). */
  readonly port: number;
  /** Publish even when no peer subscribes yet (a serving peer; its messages are simply not seen then). */
  readonly publishToZeroPeers?: boolean;
}

/** The Altair gossip `message-id` over the decompressed data. */
export function gossipMessageId(topic: string, data: Uint8Array): Uint8Array {
  const topicBytes = new TextEncoder().encode(topic);
  const length = new Uint8Array(8);
  new DataView(length.buffer).setBigUint64(0, BigInt(topicBytes.length), true);
  return sha256(concat([MESSAGE_DOMAIN_VALID_SNAPPY, length, topicBytes, data])).slice(0, 20);
}

/** Snappy block decompression bounded by MAX_PAYLOAD_SIZE (the declared length is read before anything is allocated). */
export function gossipDecompress(data: Uint8Array): Uint8Array {
  let declared = 0;
  let scale = 1;
  for (let i = 0; i < 5 && i < data.length; i++) {
    declared += (data[i]! & 0x7f) * scale;
    if ((data[i]! & 0x80) === 0) break;
    scale *= 0x80;
  }
  if (declared > MAX_PAYLOAD_SIZE) throw new Error(`a gossip message of ${declared} uncompressed bytes (at most ${MAX_PAYLOAD_SIZE})`);
  return uncompress(data);
}

export async function createConsensusHost(options: ConsensusHostOptions): Promise<ConsensusHost> {
  const node = await createLibp2p({
    // @libp2p/crypto 5.1.23 is typed against @libp2p/interface 3 while libp2p 2.9 takes interface 2's key type: the same object at run time.
    privateKey: privateKeyFromRaw(options.privateKey) as unknown as NonNullable<Parameters<typeof createLibp2p>[0]>['privateKey'],
    addresses: { listen: [`/ip4/${options.host}/tcp/${options.port}`] },
    transports: [tcp()],
    connectionEncrypters: [noise()],
    // The consensus p2p interface: clients MUST support mplex and MAY support yamux, which takes precedence when both
    // sides speak it (older clients, e.g. Lodestar 1.5, offer mplex only).
    streamMuxers: [yamux(), mplex()],
    connectionManager: { maxConnections: 64 },
    services: {
      // Gossipsub learns that a peer speaks it from identify: an identify that times out leaves the peer out of every
      // mesh for the whole connection, so a loaded machine gets 30 s instead of the default 5.
      identify: identify({ agentVersion: 'chain-data-node', timeout: 30_000 }),
      pubsub: gossipsub({
        globalSignaturePolicy: 'StrictNoSign',
        allowPublishToZeroTopicPeers: options.publishToZeroPeers ?? false,
        emitSelf: false,
        D: 8, Dlo: 6, Dhi: 12, Dlazy: 6,
        heartbeatInterval: 700,
        fanoutTTL: 60_000,
        mcacheLength: 6,
        mcacheGossip: 3,
        seenTTL: 550 * 700,
        msgIdFn: (message) => gossipMessageId(message.topic, message.data),
        dataTransform: {
          inboundTransform: (_topic, data) => gossipDecompress(data),
          outboundTransform: (_topic, data) => compress(data),
        },
        maxInboundDataLength: MAX_PAYLOAD_SIZE,
      }),
    },
  });
  return node as unknown as ConsensusHost;
}

/** `/eth2/<digest>/<name>/ssz_snappy`. */
export function gossipTopic(digest: Uint8Array, name: string): string {
  return `/eth2/${Buffer.from(digest).toString('hex')}/${name}/ssz_snappy`;
}
