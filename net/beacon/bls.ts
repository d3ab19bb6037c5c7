/**
 * BLS12-381 for the sync committee (Ethereum's proof-of-possession ciphersuite, G1 public keys,
 * G2 signatures) with `@noble/curves`. A committee's 512 keys are decompressed and subgroup-checked
 * once per committee (once per sync-committee period), then each update costs one aggregation of
 * the participants' points and one pairing check.
 */
import { bls12_381 as bls } from '@noble/curves/bls12-381.js';

export const ETH_BLS_DST = 'BLS_SIG_BLS12381G2_XMD:SHA-256_SSWU_RO_POP_';

type G1 = ReturnType<typeof bls.G1.Point.fromBytes>;

/** Decoded public keys of one sync committee. */
export interface CommitteeKeys {
  readonly points: readonly G1[];
}

const decoded = new WeakMap<readonly Uint8Array[], CommitteeKeys>();

/** Decodes (and validates) a committee's keys; the result is cached for the same pubkeys array. */
export function committeeKeys(pubkeys: readonly Uint8Array[]): CommitteeKeys {
  let keys = decoded.get(pubkeys);
  if (!keys) {
    keys = { points: pubkeys.map((key) => bls.G1.Point.fromBytes(key)) };
    decoded.set(pubkeys, keys);
  }
  return keys;
}

/**
 * `FastAggregateVerify` over the participants (`bits[i]`) of a committee. Returns false for an
 * invalid signature or for a signature that does not decode to a G2 subgroup point.
 */
export function fastAggregateVerify(keys: CommitteeKeys, bits: readonly boolean[], message: Uint8Array, signature: Uint8Array): boolean {
  const participants = keys.points.filter((_, i) => bits[i] === true);
  if (participants.length === 0) return false;
  let sig;
  try {
    sig = bls.G2.Point.fromBytes(signature);
    sig.assertValidity();
  } catch {
    return false;
  }
  const aggregate = bls.longSignatures.aggregatePublicKeys(participants);
  return bls.longSignatures.verify(sig, bls.longSignatures.hash(message, ETH_BLS_DST), aggregate);
}

/** Signing with a secret key (the devnet's sync committee): the signature on `message`. */
export function signMessage(secretKey: Uint8Array, message: Uint8Array): Uint8Array {
  return bls.longSignatures.sign(bls.longSignatures.hash(message, ETH_BLS_DST), secretKey).toBytes(true);
}

export function publicKeyOf(secretKey: Uint8Array): Uint8Array {
  return bls.longSignatures.getPublicKey(secretKey).toBytes(true);
}

export function aggregatePublicKeys(pubkeys: readonly Uint8Array[]): Uint8Array {
  return bls.longSignatures.aggregatePublicKeys(pubkeys.map((key) => bls.G1.Point.fromBytes(key))).toBytes(true);
}

export function aggregateSignatures(signatures: readonly Uint8Array[]): Uint8Array {
  return bls.longSignatures.aggregateSignatures(signatures.map((s) => bls.G2.Point.fromBytes(s))).toBytes(true);
}
