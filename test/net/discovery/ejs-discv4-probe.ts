/**
 * Runs inside a network namespace of its own (`unshare -n`, started by `discv4-ejs-client.test.ts`; the client binds
 * 0.0.0.0 with no option to change it, and in a fresh namespace only loopback exists). Starts `@ethereumjs/client`
 * with its discv4 on (`--discV4=true`, UDP on its RLPx port), then two of the node's discv4 services seeded only
 * with the client's enode URL: each must get the client's PONG (the client lands in its table) and learn of the other
 * from the client's NEIGHBORS answer. Prints one JSON line with what it saw, then stops the client.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { startDiscv4, type Discv4Service } from '../../../net/discovery/discv4.js';
import type { DiscoveredNode } from '../../../net/discovery/discv5.js';
import { nodeIdOf, parseEnode } from '../../../net/p2p/enode.js';
import { clientEnode } from '../../support/ejs-client.js';

/** Each service announces its own fixed UDP port (the namespace holds nothing else), so the client can ping it back. */
const DEADLINE_MS = 45_000;
const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString('hex');

async function main(): Promise<Record<string, unknown>> {
  const cli = process.argv[2];
  if (!cli) throw new Error('usage: ejs-discv4-probe.js <path of @ethereumjs/client\'s cli.js>');
  const dir = mkdtempSync(join(tmpdir(), 'cdn-ejs-d4-'));
  const keyFile = join(dir, 'key');
  writeFileSync(keyFile, hex(secp256k1.utils.randomSecretKey()));
  const child = spawn(process.execPath, [cli, '--dev=poa', `--unlock=${keyFile}`, '--port=30303', '--discV4=true', '--discDns=false', '--extIP=127.0.0.1', `--dataDir=${join(dir, 'data')}`], { stdio: ['ignore', 'pipe', 'pipe'] });
  const services: Discv4Service[] = [];
  try {
    const enode = await clientEnode(child, 'listener');
    const bootnode = parseEnode(enode);
    const nodes = [
      { key: secp256k1.utils.randomSecretKey(), tcp: 30_611, udp: 30_621, found: [] as DiscoveredNode[], listeners: [] as (() => void)[] },
      { key: secp256k1.utils.randomSecretKey(), tcp: 30_612, udp: 30_622, found: [] as DiscoveredNode[], listeners: [] as (() => void)[] },
    ];
    const errors: string[] = [];
    for (const node of nodes) {
      services.push(await startDiscv4({
        privateKey: node.key, host: '127.0.0.1', udpPort: node.udp, tcpPort: node.tcp, bootnodes: [bootnode], refreshIntervalMs: 1000, timeoutMs: 3000,
        onNode: (found) => {
          node.found.push(found);
          for (const listener of node.listeners) listener();
        },
        onError: (error) => errors.push(error.message),
      }));
    }
    const sees = (node: typeof nodes[0], id: Uint8Array) => new Promise<DiscoveredNode>((resolve) => {
      const check = () => {
        const hit = node.found.find((n) => hex(n.publicKey) === hex(id));
        if (hit) resolve(hit);
      };
      node.listeners.push(check);
      check();
    });
    const [a, b] = nodes as [typeof nodes[0], typeof nodes[0]];
    // A bound on the probe itself, so a client that never answers fails the test with what was seen instead of hanging.
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no discovery within ${DEADLINE_MS} ms (a saw ${a.found.length}, b saw ${b.found.length} node(s); errors: ${errors.slice(0, 3).join('; ')})`)), DEADLINE_MS);
    });
    const [clientByA, aByB, bByA] = await Promise.race([Promise.all([sees(a, bootnode.id), sees(b, nodeIdOf(a.key)), sees(a, nodeIdOf(b.key))]), deadline]);
    clearTimeout(timer);
    return {
      ok: true, clientAnswered: hex(clientByA.publicKey) === hex(bootnode.id),
      aByB: { tcp: aByB.tcp, udp: aByB.udp, expectedUdp: services[0]!.port, ip: aByB.ip }, bByA: { tcp: bByA.tcp, udp: bByA.udp, expectedUdp: services[1]!.port },
      tables: services.map((s) => s.tableSize()), errors: errors.slice(0, 5),
    };
  } finally {
    for (const service of services) service.stop();
    child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
}

main().then(
  (result) => { process.stdout.write(`${JSON.stringify(result)}\n`); process.exit(0); },
  (error: unknown) => { process.stdout.write(`${JSON.stringify({ ok: false, error: (error as Error).message })}\n`); process.exit(1); },
);
