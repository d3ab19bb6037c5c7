/**
 * EIP-8 vectors (../shared/fixtures/vectors/eip-8.json): the RLPx auth/ack handshake messages of every format parse
 * with devp2p's ECIES as the node uses it, the derived frame secrets match the EIP's values, and the forward-
 * compatible hello and discv4 packets decode (extra list elements and trailing data ignored).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decode as decodeDiscv4, ECIES } from '@ethereumjs/devp2p';
import { RLP } from '@ethereumjs/rlp';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { bytesToHex, concatBytes, hexToBytes } from '../../../net/eth/hex.js';
import { keccak256 } from '../../../net/eth/keccak.js';
import { keccak_256 } from '@noble/hashes/sha3.js';

function xorBytes(a: Uint8Array, b: Uint8Array): Uint8Array {
  return a.map((byte, i) => byte ^ b[i]!);
}
import { nodeIdOf } from '../../../net/p2p/enode.js';
import { readJson } from '../eth/fixtures.js';

interface Vector { label: string; hex?: string; text?: string }
const vectors = (readJson('vectors/eip-8.json') as { vectors: Vector[] }).vectors;

function hexOf(prefix: string): Uint8Array {
  const vector = vectors.find((v) => v.label.startsWith(prefix));
  if (!vector?.hex) throw new Error(`no vector labelled ${prefix}`);
  return hexToBytes(`0x${vector.hex}`);
}

function textValue(name: string): Uint8Array {
  for (const vector of vectors) {
    const match = new RegExp(`${name.replace(/[()]/g, '\\$&')}\\s*[:=]\\s*([0-9a-f]{64})`).exec(vector.text ?? '');
    if (match) return hexToBytes(`0x${match[1]}`);
  }
  throw new Error(`no value ${name} in the vectors`);
}

const KEY_A = textValue('Static Key A');
const KEY_B = textValue('Static Key B');
const EPH_A = textValue('Ephemeral Key A');
const EPH_B = textValue('Ephemeral Key B');
const NONCE_A = textValue('Nonce A');
const NONCE_B = textValue('Nonce B');

type EciesInternals = Record<string, unknown> & {
  _ephemeralPrivateKey: Uint8Array; _ephemeralPublicKey: Uint8Array; _nonce: Uint8Array; _gotEIP8Auth: boolean; _gotEIP8Ack: boolean;
  _remoteNonce: Uint8Array | null; _remoteEphemeralPublicKey: Uint8Array | null; _ephemeralSharedSecret: Uint8Array | null;
  _remoteInitMsg: Uint8Array | null; _initMsg: Uint8Array | null; _ingressMac: { update(data: Uint8Array | string): void; digest(): Uint8Array } | null;
  _setupFrame(remote: Uint8Array, incoming: boolean): void;
};

/** An ECIES session of `key` toward `remoteKey`, with the EIP's fixed ephemeral key and nonce. */
function session(key: Uint8Array, remoteKey: Uint8Array, ephemeral: Uint8Array, nonce: Uint8Array): EciesInternals {
  const ecies = new ECIES(key, nodeIdOf(key), nodeIdOf(remoteKey)) as unknown as EciesInternals;
  ecies._ephemeralPrivateKey = ephemeral;
  ecies._ephemeralPublicKey = secp256k1.getPublicKey(ephemeral, false);
  ecies._nonce = nonce;
  return ecies;
}

const ephemeralPublicB = secp256k1.getPublicKey(EPH_B, false);
const ephemeralPublicA = secp256k1.getPublicKey(EPH_A, false);

describe('EIP-8 RLPx handshake vectors', () => {
  it('B parses Auth₁ (pre-EIP-8 format): A\'s nonce and ephemeral key', () => {
    const b = session(KEY_B, KEY_A, EPH_B, NONCE_B);
    (b as unknown as ECIES).parseAuthPlain(hexOf('(Auth₁)'));
    assert.deepEqual(b._remoteNonce, NONCE_A);
    assert.deepEqual(b._remoteEphemeralPublicKey, ephemeralPublicA);
  });

  for (const label of ['(Auth₂)', '(Auth₃)']) {
    it(`B parses ${label} (EIP-8 format, ${label === '(Auth₃)' ? 'version 56 with additional list elements' : 'version 4'})`, () => {
      const b = session(KEY_B, KEY_A, EPH_B, NONCE_B);
      b._gotEIP8Auth = true;
      (b as unknown as ECIES).parseAuthEIP8(hexOf(label));
      assert.deepEqual(b._remoteNonce, NONCE_A);
      assert.deepEqual(b._remoteEphemeralPublicKey, ephemeralPublicA);
    });
  }

  it('A parses Ack₁ (pre-EIP-8), Ack₂ and Ack₃ (EIP-8, version 57 with additional list elements)', () => {
    for (const [label, eip8] of [['(Ack₁)', false], ['(Ack₂)', true], ['(Ack₃)', true]] as const) {
      const a = session(KEY_A, KEY_B, EPH_A, NONCE_A);
      a._gotEIP8Ack = eip8;
      if (eip8) (a as unknown as ECIES).parseAckEIP8(hexOf(label));
      else (a as unknown as ECIES).parseAckPlain(hexOf(label));
      assert.deepEqual(a._remoteNonce, NONCE_B, label);
      assert.deepEqual(a._remoteEphemeralPublicKey, ephemeralPublicB, label);
    }
  });

  it('B derives the EIP\'s aes-secret, mac-secret and ingress-mac("foo") for (Auth₂, Ack₂)', () => {
    const b = session(KEY_B, KEY_A, EPH_B, NONCE_B);
    b._gotEIP8Auth = true;
    (b as unknown as ECIES).parseAuthEIP8(hexOf('(Auth₂)'));
    b._initMsg = hexOf('(Ack₂)');
    b._setupFrame(b._remoteInitMsg!, true);
    const ephemeralShared = b._ephemeralSharedSecret!;
    const sharedSecret = keccak256(concatBytes(ephemeralShared, keccak256(concatBytes(NONCE_B, NONCE_A))));
    const aesSecret = keccak256(concatBytes(ephemeralShared, sharedSecret));
    const macSecret = keccak256(concatBytes(ephemeralShared, aesSecret));
    assert.equal(bytesToHex(aesSecret), bytesToHex(textValue('aes-secret')));
    assert.equal(bytesToHex(macSecret), bytesToHex(textValue('mac-secret')));
    // ingress-mac = keccak256 state seeded with (mac-secret ^ nonce B) || Auth₂, then fed "foo".
    const expected = textValue('ingress-mac("foo")');
    const ours = keccak_256.create().update(concatBytes(xorBytes(macSecret, NONCE_B), hexOf('(Auth₂)'))).update(new TextEncoder().encode('foo')).digest();
    assert.equal(bytesToHex(ours), bytesToHex(expected));
    // devp2p's MAC digest is the 16-byte frame MAC: the first half of the same keccak state.
    b._ingressMac!.update('foo');
    assert.equal(bytesToHex(b._ingressMac!.digest()), bytesToHex(expected.subarray(0, 16)));
  });

  it('the hello packet with additional list elements decodes: version, client id, capabilities, port, node id', () => {
    const packet = hexOf('devp2p hello packet');
    const hello = RLP.decode(packet) as unknown as [Uint8Array, Uint8Array, [Uint8Array, Uint8Array][], Uint8Array, Uint8Array, ...unknown[]];
    assert.equal(hello[0][0], 55, 'base protocol version 55 (a future version a v5 reader must accept)');
    assert.equal(new TextDecoder().decode(hello[1]), 'kneth/v0.91/plan9');
    assert.deepEqual(hello[2].map(([name, version]) => `${new TextDecoder().decode(name)}/${version[0]}`), ['eth/61', 'mork/22']);
    assert.equal(Buffer.from(hello[3]).readUInt16BE(), 9999);
    assert.equal(hello[4].length, 64);
    assert.ok(hello.length > 5, 'carries additional elements a forward-compatible reader ignores');
  });
});

describe('EIP-8 discv4 packet vectors', () => {
  const signer = bytesToHex(nodeIdOf(hexOf('The packets are signed')));
  for (const [label, type] of [['ping packet with version 4', 'ping'], ['ping packet with version 555', 'ping'], ['pong packet', 'pong'], ['findnode packet', 'findneighbours'], ['neighbours packet', 'neighbours']] as const) {
    it(`${label} decodes, its signature recovers the signing key`, () => {
      const packet = decodeDiscv4(hexOf(label));
      assert.equal(packet.typename, type);
      assert.equal(bytesToHex(packet.publicKey.subarray(packet.publicKey.length - 64)), signer);
      if (type === 'neighbours') assert.equal((packet.data as { peers: unknown[] }).peers.length, 4);
    });
  }

  it('a packet with a flipped hash byte is refused', () => {
    const bytes = hexOf('pong packet');
    bytes[0] = bytes[0]! ^ 0xff;
    assert.throws(() => decodeDiscv4(bytes));
  });
});
