/** `enode://<node id>@<host>:<tcp port>[?discport=<udp port>]`: a devp2p node address (the node id is the uncompressed public key without its 0x04 prefix). */
import { secp256k1 } from '@noble/curves/secp256k1.js';

export interface Enode {
  /** 64 bytes. */
  readonly id: Uint8Array;
  readonly host: string;
  readonly tcpPort: number;
  readonly udpPort: number;
}

const ENODE = /^enode:\/\/(?<id>[0-9a-fA-F]{128})@(?<host>\[[0-9a-fA-F:]+\]|[A-Za-z0-9.-]+):(?<port>\d{1,5})(?:\?discport=(?<disc>\d{1,5}))?$/;

export class EnodeFormatError extends Error {
  constructor(value: string, why: string) {
    super(`${JSON.stringify(value)} is not an enode URL (${why}); expected enode://<128 hex digits>@<host>:<port>`);
    this.name = 'EnodeFormatError';
  }
}

export function parseEnode(value: string): Enode {
  const match = ENODE.exec(value.trim());
  if (!match?.groups) throw new EnodeFormatError(value, 'shape');
  const { id, host, port, disc } = match.groups as { id: string; host: string; port: string; disc?: string };
  const tcpPort = Number(port);
  const udpPort = disc === undefined ? tcpPort : Number(disc);
  if (tcpPort < 1 || tcpPort > 65535 || udpPort < 1 || udpPort > 65535) throw new EnodeFormatError(value, 'port out of range');
  const idBytes = Uint8Array.from(Buffer.from(id, 'hex'));
  try {
    secp256k1.Point.fromBytes(Uint8Array.of(4, ...idBytes));
  } catch {
    throw new EnodeFormatError(value, 'the node id is not a secp256k1 public key');
  }
  return { id: idBytes, host: host.replace(/^\[|\]$/g, ''), tcpPort, udpPort };
}

/** The node id (64-byte public key) of a private key. */
export function nodeIdOf(privateKey: Uint8Array): Uint8Array {
  return secp256k1.getPublicKey(privateKey, false).subarray(1);
}

export function formatEnode(id: Uint8Array, host: string, tcpPort: number): string {
  return `enode://${Buffer.from(id).toString('hex')}@${host.includes(':') ? `[${host}]` : host}:${tcpPort}`;
}
