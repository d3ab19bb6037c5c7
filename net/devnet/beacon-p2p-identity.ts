/**
 * The devnet consensus peer's identity (net/devnet/beacon-p2p.ts): a secp256k1 key derived from the devnet seed and
 * the node record it announces, computable before the peer starts (no libp2p import here), so a
 * `finality.kind = "consensus_p2p"` node on the devnet takes that record as its bootnode by default.
 */
import { SignableENR } from '@chainsafe/enr';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { currentSlot, epochAtSlot, type BeaconChainConfig } from '../beacon/config.js';
import { enrForkId, NO_BLOB_SCHEDULE } from '../beacon/p2p/fork-digest.js';

/** The devnet consensus peer's secp256k1 key (deterministic from the seed). */
export function devnetBeaconPeerKey(seed: string): Uint8Array {
  for (let i = 0; ; i++) {
    const key = sha256(new TextEncoder().encode(`chain-data-node devnet consensus peer|${seed}|${i}`));
    if (secp256k1.utils.isValidSecretKey(key)) return key;
  }
}

/** The peer's node record for `host:port` (IPv4; TCP and UDP on the same port) with its `eth2` fork id. */
export function devnetBeaconPeerEnr(config: BeaconChainConfig, seed: string, host: string, port: number, nowMs = Date.now()): string {
  const record = SignableENR.createV4(devnetBeaconPeerKey(seed));
  record.ip = host;
  record.udp = port;
  record.tcp = port;
  record.set('eth2', enrForkId(config, NO_BLOB_SCHEDULE, epochAtSlot(config, currentSlot(config, nowMs))));
  return record.encodeTxt();
}
