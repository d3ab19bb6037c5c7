/**
 * The devnet source's Beacon-API-shaped endpoint (net/devnet/beacon-server.ts): the devnet's beacon
 * chain over its execution blocks — recent ones from the devnet's memory, older ones (a light
 * client catching up from the genesis checkpoint) from the store's canonical chain.
 */
import type { ActorContext } from '../../runtime/actor.js';
import { decodeHeader } from '../../net/eth/header.js';
import { bytesToHex, type Hex } from '../../net/eth/hex.js';
import type { Devnet } from '../../net/devnet/index.js';
import { devnetBeaconConfig } from '../../net/devnet/beacon-chain.js';
import { DevnetBeaconChain, type ExecutionBlockSource } from '../../net/devnet/beacon-objects.js';
import { startDevnetBeaconServer, type DevnetBeaconServer } from '../../net/devnet/beacon-server.js';
import { getCanonicalHash, getHeaderBytes } from '../../store/chain-material.js';
import type { Store } from '../../store/env.js';

export async function startDevnetBeaconEndpoint(ctx: ActorContext, store: Store, devnet: Devnet, address: string): Promise<DevnetBeaconServer> {
  const blocks: ExecutionBlockSource = {
    head: () => devnet.head().number,
    blockAt(number) {
      const recent = devnet.blockByNumber(number);
      if (recent) return { header: recent.block.header, hash: recent.hash };
      const hash = getCanonicalHash(store, number);
      const bytes = hash ? getHeaderBytes(store, hash) : undefined;
      return hash && bytes ? { header: decodeHeader(bytes), hash: bytesToHex(hash) as Hex } : undefined;
    },
  };
  const chain = new DevnetBeaconChain(devnetBeaconConfig(devnet.config), blocks, String(devnet.config.seed), devnet.config.finalityLag);
  const server = await startDevnetBeaconServer(address, chain, () => devnet.head().number);
  ctx.log.info('devnet beacon API listening', { url: server.url });
  return server;
}
