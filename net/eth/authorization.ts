/** EIP-7702 authorizations: the signing hash `keccak256(0x05 || rlp([chainId, address, nonce]))`, signing, recovery. */
import { fixedBytes, uintField } from './field-bytes.js';
import { concatBytes, type Address } from './hex.js';
import { keccak256 } from './keccak.js';
import { encodeRlp } from './rlp.js';
import { recoverAddress, signHash, type PrivateKey } from './signature.js';
import type { Authorization, SignedAuthorization } from './transaction-types.js';

const AUTHORIZATION_MAGIC = 0x05;

export function authorizationSigningHash(auth: Authorization): Uint8Array {
  const fields = [
    uintField(auth.chainId, 'authorization', 'chainId'),
    fixedBytes(auth.address, 20, 'authorization', 'address'),
    uintField(auth.nonce, 'authorization', 'nonce', 64),
  ];
  return keccak256(concatBytes(Uint8Array.of(AUTHORIZATION_MAGIC), encodeRlp(fields)));
}

export function signAuthorization(auth: Authorization, privateKey: PrivateKey): SignedAuthorization {
  const { chainId, address, nonce } = auth;
  return { chainId, address, nonce, ...signHash(authorizationSigningHash(auth), privateKey) };
}

/** The authority (account that delegates its code) of a signed authorization. */
export function recoverAuthorizationAddress(auth: SignedAuthorization): Address {
  return recoverAddress(authorizationSigningHash(auth), auth);
}
