/**
 * `@ethereumjs/client` as a Clique PoA (London) dev chain sealed by a fixed key (so its genesis is known here), for
 * the probe scripts that run inside a network namespace of their own (ejs-peer-follow.ts, ejs-peer-history.ts):
 * starts the client, connects to it with the node's RLPx host, and waits, asking the peer itself, until it has
 * sealed a given block (its Clique period is 10 s).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { buildGenesisBlock } from '../../../net/eth/genesis-state.js';
import { parseGethGenesis } from '../../../net/eth/genesis.js';
import { privateKeyToAddress } from '../../../net/eth/signature.js';
import { parseEnode } from '../../../net/p2p/enode.js';
import { EthHost } from '../../../net/p2p/host.js';
import type { EthSession } from '../../../net/p2p/session.js';
import { localStatus, refuseStatus, type ChainIdentity } from '../../../net/p2p/status.js';
import { clientEnode } from '../../support/ejs-client.js';

const KEY = '9fe4dfbfde7fd1df8a5d9177c4e10d9c0f79860f36cd2cf12f147fa42969b30e';

/** The genesis `ethereumjs --dev=poa` builds for a prefunded sealer (its setupDevnet, as of 0.10.5). */
function devGenesis(address: string): unknown {
  const addr = address.slice(2).toLowerCase();
  return {
    config: {
      chainId: 123456, homesteadBlock: 0, eip150Block: 0, eip155Block: 0, eip158Block: 0, byzantiumBlock: 0, constantinopleBlock: 0,
      petersburgBlock: 0, istanbulBlock: 0, berlinBlock: 0, londonBlock: 0, clique: { period: 10, epoch: 30000 },
    },
    nonce: '0x0', timestamp: '0x614b3731', gasLimit: '0x47b760', difficulty: '0x1', mixHash: `0x${'0'.repeat(64)}`, coinbase: `0x${'0'.repeat(40)}`,
    number: '0x0', gasUsed: '0x0', parentHash: `0x${'0'.repeat(64)}`, baseFeePerGas: '0x7',
    extraData: `0x${'0'.repeat(64)}${addr}${'0'.repeat(130)}`, alloc: { [addr]: { balance: '0x10000000000000000000' } },
  };
}

export interface EjsDevPeer {
  readonly chain: ChainIdentity;
  readonly genesis: ReturnType<typeof buildGenesisBlock>;
  readonly child: ChildProcess;
  readonly host: EthHost;
  /** Connects to the client (after its listener is up). */
  connect(): Promise<EthSession>;
  /** Waits until the peer has sealed block `number`, asking it over `session`. */
  reach(session: EthSession, number: number): Promise<void>;
  stop(): void;
}

export function startEjsDevPeer(cli: string): EjsDevPeer {
  const dir = mkdtempSync(join(tmpdir(), 'cdn-ejs-'));
  const keyFile = join(dir, 'key');
  writeFileSync(keyFile, KEY);
  const genesisSpec = parseGethGenesis(devGenesis(privateKeyToAddress(`0x${KEY}`)));
  const genesis = buildGenesisBlock(genesisSpec);
  const chain: ChainIdentity = { chainId: Number(genesisSpec.chainId), schedule: genesisSpec.schedule, genesis: { hash: genesis.hash, timestamp: genesis.header.timestamp } };
  const child = spawn(process.execPath, [cli, '--dev=poa', `--unlock=${keyFile}`, '--port=30303', '--discV4=false', '--discDns=false', '--extIP=127.0.0.1', `--dataDir=${join(dir, 'data')}`], { stdio: ['ignore', 'pipe', 'pipe'] });
  const host = new EthHost({
    privateKey: secp256k1.utils.randomSecretKey(), status: () => localStatus(chain, { number: 0, hash: chain.genesis.hash, timestamp: chain.genesis.timestamp, earliest: 0 }),
    checkStatus: (remote) => refuseStatus(chain, { number: 0, timestamp: chain.genesis.timestamp }, remote), handler: null, maxPeers: 2, handshakeTimeoutMs: 10_000, listen: null,
  });
  return {
    chain, genesis, child, host,
    async connect() {
      const enode = await clientEnode(child, 'RLPx listener');
      const established = new Promise<EthSession>((resolve, reject) => {
        host.once('session', resolve);
        host.once('handshake:failed', (reason) => reject(new Error(`handshake refused: ${reason}`)));
      });
      await host.dial(parseEnode(enode));
      return established;
    },
    async reach(session, number) {
      const deadline = Date.now() + 30_000 * Math.max(1, number);
      for (;;) {
        const answer = await session.getBlockHeaders({ number }, 1, 0, false, 10_000);
        if (answer.items.length > 0) return;
        if (Date.now() > deadline) throw new Error(`the peer did not reach block ${number}`);
        // Polling the peer's own chain: the probe has no event for a block the peer sealed.
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
    },
    stop() {
      host.destroy();
      child.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
