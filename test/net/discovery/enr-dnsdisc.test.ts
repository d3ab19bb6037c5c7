/** ENR (EIP-778) and DNS tree (EIP-1459) vectors from ../shared/fixtures/vectors/enr-dnsdisc.json. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decodeNodeRecord, encodeNodeRecord } from '../../../net/discovery/enr.js';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { base32Encode, buildDnsTree, syncDnsTree } from '../../../net/discovery/dns-tree.js';
import { dnsTxtResolver } from '../../../net/discovery/dns-resolver.js';
import { startDnsStub } from '../../support/dns-stub.js';
import { nodeIdOf } from '../../../net/p2p/enode.js';
import { hexToBytes } from '../../../net/eth/hex.js';
import { readJson } from '../eth/fixtures.js';

interface Vectors {
  enr: { record: string; privateKey: string; nodeId: string; ip: string; udp: number };
  dnsTree: { url: string; publicKey: string; txt: Record<string, string>; expectedNodeRecords: number };
}
const vectors = readJson('vectors/enr-dnsdisc.json') as Vectors;
const txt = new Map(Object.entries(vectors.dnsTree.txt));
/**
 * The example zone is signed by the vector's `publicKey`; the `url` of dnsdisc.md names another key (the document's
 * illustration), so the tree URL is built from the signing key, and the document's URL must be refused.
 */
const signingKey = secp256k1.Point.fromBytes(hexToBytes(vectors.dnsTree.publicKey)).toBytes(true);
const treeUrl = `enrtree://${base32Encode(signingKey)}@nodes.example.org`;
const resolver = (records: Map<string, string>) => async (name: string) => {
  const value = records.get(name);
  if (value === undefined) throw new Error(`NXDOMAIN ${name}`);
  return value;
};

describe('ENR and DNS tree vectors', () => {
  it('the EIP-778 record verifies and names 127.0.0.1:30303 with the key of the vector', () => {
    const record = decodeNodeRecord(vectors.enr.record);
    assert.equal(record.ip, vectors.enr.ip);
    assert.equal(record.udp, vectors.enr.udp);
    assert.equal(record.seq, 1n);
    assert.equal(record.nodeId, `0x${vectors.enr.nodeId}`);
    assert.deepEqual(record.publicKey, nodeIdOf(hexToBytes(`0x${vectors.enr.privateKey}`)));
  });

  it('a record with a changed byte fails its signature', () => {
    const record = vectors.enr.record;
    const tampered = `${record.slice(0, 20)}${record[20] === 'A' ? 'B' : 'A'}${record.slice(21)}`;
    assert.throws(() => decodeNodeRecord(tampered), /signature|record/);
  });

  it(`the example tree syncs: signed root, branch, ${vectors.dnsTree.expectedNodeRecords} verified node records and one link`, async () => {
    const tree = await syncDnsTree(treeUrl, resolver(txt));
    assert.equal(tree.nodes.length, vectors.dnsTree.expectedNodeRecords);
    assert.equal(tree.seq, 1);
    assert.equal(tree.skipped, 0);
    assert.deepEqual(tree.links, ['enrtree://AM5FCQLWIZX2QFPNJAP7VUERCCRNGRHWZG3YYHIUV7BVDQ5FDPRT2@morenodes.example.org']);
    for (const node of tree.nodes) assert.equal(node.publicKey.length, 64);
  });

  it('a leaf whose text does not hash to its name is skipped', async () => {
    const altered = new Map(txt);
    const name = '2XS2367YHAXJFGLZHVAWLQD4ZY.nodes.example.org';
    altered.set(name, txt.get('H4FHT4B454P6UXFD7JCYQ5PWDY.nodes.example.org')!);
    const tree = await syncDnsTree(treeUrl, resolver(altered));
    assert.equal(tree.nodes.length, vectors.dnsTree.expectedNodeRecords - 1);
    assert.equal(tree.skipped, 1);
  });

  it('the same zone under a URL naming another key is refused', async () => {
    await assert.rejects(syncDnsTree(vectors.dnsTree.url, resolver(txt)), /signature does not verify/);
  });

  it('the tree syncs through a real resolver (node:dns) from a UDP DNS server on loopback', async (t) => {
    const stub = await startDnsStub(txt);
    t.after(() => stub.close());
    const tree = await syncDnsTree(treeUrl, dnsTxtResolver(stub.address, 2000));
    assert.equal(tree.nodes.length, vectors.dnsTree.expectedNodeRecords);
    assert.ok(stub.queries.includes('nodes.example.org'));
    assert.ok(stub.queries.includes('jwxydbpxywg6fx3gmdibfa6cj4.nodes.example.org'));
  });

  it('a root with altered content is refused', async () => {
    const forged = new Map(txt);
    const root = txt.get('nodes.example.org')!;
    forged.set('nodes.example.org', root.replace('seq=1', 'seq=2'));
    await assert.rejects(syncDnsTree(treeUrl, resolver(forged)));
  });
});

describe('building and signing records and trees', () => {
  it('a record this node signs decodes with its fields and key', () => {
    const key = secp256k1.utils.randomSecretKey();
    const record = decodeNodeRecord(encodeNodeRecord(key, { seq: 7n, ip: '127.0.0.1', tcp: 30303, udp: 30301 }));
    assert.deepEqual([record.seq, record.ip, record.tcp, record.udp], [7n, '127.0.0.1', 30303, 30301]);
    assert.deepEqual(record.publicKey, nodeIdOf(key));
  });

  it('a tree this node builds syncs back with every record and link', async () => {
    const keys = [1, 2, 3].map(() => secp256k1.utils.randomSecretKey());
    const records = keys.map((key, i) => encodeNodeRecord(key, { seq: 1n, ip: '127.0.0.1', tcp: 30303 + i, udp: 30303 + i }));
    const signer = secp256k1.utils.randomSecretKey();
    const { url, zone } = buildDnsTree({ records, links: [vectors.dnsTree.url], privateKey: signer, domain: 'peers.test', seq: 3 });
    const tree = await syncDnsTree(url, resolver(zone));
    assert.equal(tree.seq, 3);
    assert.deepEqual(tree.nodes.map((n) => n.tcp).sort(), [30303, 30304, 30305]);
    assert.deepEqual(tree.links, [vectors.dnsTree.url]);
  });
});
