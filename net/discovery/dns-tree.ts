/**
 * EIP-1459 node lists: walks an `enrtree://<key>@<domain>` tree through a TXT resolver — the root (its signature
 * checked against the URL's key), branches, and leaves (each entry's name must be the base32 of the first 16 bytes of
 * keccak256 of its text; each record's own signature is checked) — and returns the node records. Links to other trees
 * are returned, not followed. A tree that is too large or loops is cut at `maxEntries`.
 */
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { keccak256 } from '../eth/keccak.js';
import { decodeNodeRecord, type NodeRecord } from './enr.js';

export type TxtResolver = (name: string) => Promise<string>;

export interface DnsTree {
  /** The root's `e=` hash (changes with every update of the list). */
  readonly root: string;
  readonly seq: number;
  readonly nodes: readonly NodeRecord[];
  /** `enrtree://` links found in the link subtree. */
  readonly links: readonly string[];
  /** Entries that failed to resolve or verify. */
  readonly skipped: number;
}

export class DnsTreeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DnsTreeError';
  }
}

const BASE32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

export function base32Decode(text: string): Uint8Array {
  const out: number[] = [];
  let buffer = 0;
  let bits = 0;
  for (const char of text.replace(/=+$/, '')) {
    const value = BASE32.indexOf(char);
    if (value < 0) throw new DnsTreeError(`"${char}" is not base32`);
    buffer = (buffer << 5) | value;
    bits += 5;
    if (bits >= 8) {
      bits -= 8;
      out.push((buffer >> bits) & 0xff);
    }
  }
  return Uint8Array.from(out);
}

export function base32Encode(bytes: Uint8Array): string {
  let out = '';
  let buffer = 0;
  let bits = 0;
  for (const byte of bytes) {
    buffer = (buffer << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      bits -= 5;
      out += BASE32[(buffer >> bits) & 31];
    }
  }
  if (bits > 0) out += BASE32[(buffer << (5 - bits)) & 31];
  return out;
}

export function parseTreeUrl(url: string): { publicKey: Uint8Array; domain: string } {
  const match = /^enrtree:\/\/([A-Z2-7]+)@([A-Za-z0-9.-]+)$/.exec(url);
  if (!match) throw new DnsTreeError(`${JSON.stringify(url)} is not enrtree://<base32 key>@<domain>`);
  const publicKey = base32Decode(match[1]!);
  if (publicKey.length !== 33) throw new DnsTreeError('the tree key must be a 33-byte compressed secp256k1 key');
  return { publicKey, domain: match[2]! };
}

function verifyRoot(text: string, publicKey: Uint8Array): { e: string; l: string; seq: number } {
  const match = /^enrtree-root:v1 e=([A-Z2-7]+) l=([A-Z2-7]+) seq=(\d+) sig=([A-Za-z0-9_-]+)$/.exec(text);
  if (!match) throw new DnsTreeError('the tree root is not "enrtree-root:v1 e=… l=… seq=… sig=…"');
  const signature = Buffer.from(match[4]!, 'base64url');
  if (signature.length !== 65) throw new DnsTreeError('the root signature is not 65 bytes');
  const signed = keccak256(new TextEncoder().encode(text.slice(0, text.indexOf(' sig='))));
  if (!secp256k1.verify(signature.subarray(0, 64), signed, publicKey, { prehash: false, lowS: false })) throw new DnsTreeError('the tree root signature does not verify');
  return { e: match[1]!, l: match[2]!, seq: Number(match[3]) };
}

export async function syncDnsTree(url: string, resolveTxt: TxtResolver, maxEntries = 2000): Promise<DnsTree> {
  const { publicKey, domain } = parseTreeUrl(url);
  const root = verifyRoot(await resolveTxt(domain), publicKey);
  const nodes: NodeRecord[] = [];
  const links: string[] = [];
  let skipped = 0;
  const seen = new Set<string>();
  const walk = async (hash: string, leaf: 'enr' | 'link'): Promise<void> => {
    if (seen.has(hash) || seen.size >= maxEntries) return;
    seen.add(hash);
    let text: string;
    try {
      text = await resolveTxt(`${hash}.${domain}`);
    } catch {
      skipped++;
      return;
    }
    if (base32Encode(keccak256(new TextEncoder().encode(text)).subarray(0, 16)) !== hash) {
      skipped++;
      return;
    }
    if (text.startsWith('enrtree-branch:')) {
      for (const child of text.slice('enrtree-branch:'.length).split(',').filter((c) => c !== '')) await walk(child, leaf);
    } else if (leaf === 'enr' && text.startsWith('enr:')) {
      try {
        nodes.push(decodeNodeRecord(text));
      } catch {
        skipped++;
      }
    } else if (leaf === 'link' && text.startsWith('enrtree://')) {
      links.push(text);
    } else {
      skipped++;
    }
  };
  await walk(root.e, 'enr');
  await walk(root.l, 'link');
  return { root: root.e, seq: root.seq, nodes, links, skipped };
}

/** The name of a tree entry: base32 of the first 16 bytes of keccak256 of its text. */
export function entryHash(text: string): string {
  return base32Encode(keccak256(new TextEncoder().encode(text)).subarray(0, 16));
}

/**
 * A signed EIP-1459 zone for `domain` (one branch over the records, one over the links): the TXT records an operator
 * publishes, and what a test serves from a DNS stub. Returns name → text and the tree's `enrtree://` URL.
 */
export function buildDnsTree(input: { records: readonly string[]; links: readonly string[]; privateKey: Uint8Array; domain: string; seq: number }): { url: string; zone: Map<string, string> } {
  const zone = new Map<string, string>();
  const put = (text: string) => {
    const hash = entryHash(text);
    zone.set(`${hash}.${input.domain}`, text);
    return hash;
  };
  const enrRoot = put(`enrtree-branch:${input.records.map(put).join(',')}`);
  const linkRoot = put(`enrtree-branch:${input.links.map(put).join(',')}`);
  const content = `enrtree-root:v1 e=${enrRoot} l=${linkRoot} seq=${input.seq}`;
  const signature = secp256k1.sign(keccak256(new TextEncoder().encode(content)), input.privateKey, { prehash: false, format: 'recovered' });
  // noble's recovered format is recovery || r || s; the tree wants r || s || recovery.
  const rsv = Uint8Array.from([...signature.subarray(1), signature[0]!]);
  zone.set(input.domain, `${content} sig=${Buffer.from(rsv).toString('base64url')}`);
  return { url: `enrtree://${base32Encode(secp256k1.getPublicKey(input.privateKey, true))}@${input.domain}`, zone };
}
