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
import type { DevnetBeaconPeer } from '../../net/devnet/beacon-p2p.js';
import { getCanonicalHash, getHeaderBytes } from '../../store/chain-material.js';
import type { Store } from '../../store/store.js';

/** The Beacon API endpoint (`address`) and/or the consensus p2p peer (`p2p`, IPv4:port) over the same beacon chain. */
export async function startDevnetBeaconEndpoint(ctx: ActorContext, store: Store, devnet: Devnet, address: string | null, p2p: string | null = null): Promise<Pick<DevnetBeaconServer, 'headChanged' | 'close'>> {
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
  const server = address === null ? null : await startDevnetBeaconServer(address, chain, () => devnet.head().number);
  if (server) ctx.log.info('devnet beacon API listening', { url: server.url });
  let peer: DevnetBeaconPeer | null = null;
  if (p2p !== null) {
    const [host, port] = p2p.split(':');
    try {
      // Loaded only when configured: libp2p is a large import the other devnet setups do not need.
      const { startDevnetBeaconPeer } = await import('../../net/devnet/beacon-p2p.js');
      peer = await startDevnetBeaconPeer({
        chain, head: () => devnet.head().number, seed: String(devnet.config.seed), host: host!, port: Number(port),
        onError: (error) => ctx.log.warn('devnet consensus peer', { reason: error.message }),
      });
    } catch (error) {
      await server?.close();
      throw error;
    }
    ctx.log.info('devnet consensus p2p peer listening', { peerId: peer.peerId, tcp: peer.tcpPort, enr: peer.enr });
  }
  return {
    headChanged() {
      server?.headChanged();
      peer?.headChanged();
    },
    async close() {
      await peer?.close();
      await server?.close();
    },
  };
}
