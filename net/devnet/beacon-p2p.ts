/**
 * The devnet's consensus p2p peer: its light-client data (net/devnet/beacon-server.ts's objects, signed by the devnet's
 * own sync committee) over libp2p Req/Resp (`light_client_bootstrap`, `light_client_updates_by_range`,
 * `light_client_finality_update`, `light_client_optimistic_update`), the finality update published on gossip when the
 * finalized checkpoint moves and the optimistic update on every head, and a discv5 record carrying its `eth2` fork id
 * on the same port (UDP). Its secp256k1 key derives from the devnet seed, so its record is known before it starts
 * (`devnetBeaconPeerEnr`): a `finality.kind = "consensus_p2p"` node on the devnet uses it as its bootnode by default.
 */
import { startDiscv5, type Discv5Service } from '../discovery/discv5.js';
import { currentSlot, epochAtSlot } from '../beacon/config.js';
import { enrForkId, NO_BLOB_SCHEDULE } from '../beacon/p2p/fork-digest.js';
import { createConsensusHost } from '../beacon/p2p/host.js';
import { startPeerProtocols, type LocalChainStatus, type PeerProtocols } from '../beacon/p2p/peer-protocols.js';
import { serveLightClientData, type LightClientData, type LightClientServer, type ServedObject } from '../beacon/p2p/light-client-server.js';
import { bytesToHex } from '../eth/hex.js';
import type { DevnetBeaconChain } from './beacon-objects.js';
import { createDevnetBeaconApi } from './beacon-server.js';
import { devnetBeaconPeerKey } from './beacon-p2p-identity.js';

export { devnetBeaconPeerEnr, devnetBeaconPeerKey } from './beacon-p2p-identity.js';

export interface DevnetBeaconPeer {
  readonly enr: string;
  readonly peerId: string;
  readonly tcpPort: number;
  /** Status, MetaData, Ping and Goodbye with the peers connected to it. */
  readonly protocols: PeerProtocols;
  /** The head moved: publish the optimistic update, and the finality update when the finalized checkpoint moved. */
  headChanged(): void;
  close(): Promise<void>;
}

/** The devnet's light-client objects (Beacon API JSON from its endpoint's routes) with their context slots. */
export function devnetLightClientData(chain: DevnetBeaconChain, head: () => number): LightClientData {
  const route = createDevnetBeaconApi(chain, head);
  const attempt = (path: string, params = new URLSearchParams()): unknown => {
    try {
      return route(path, params);
    } catch (error) {
      if ((error as { status?: number }).status === 404) return null;
      throw error;
    }
  };
  const object = (answer: unknown, slotOf: (data: Record<string, any>) => unknown): ServedObject | null => {
    if (answer === null) return null;
    const data = (answer as { data: Record<string, any> }).data;
    return { slot: Number(slotOf(data)), data };
  };
  return {
    bootstrap: (root) => object(attempt(`/eth/v1/beacon/light_client/bootstrap/${bytesToHex(root)}`), (d) => d.header.beacon.slot),
    updates(startPeriod, count) {
      const list = attempt('/eth/v1/beacon/light_client/updates', new URLSearchParams({ start_period: String(startPeriod), count: String(count) })) as unknown[] | null;
      return (list ?? []).map((entry) => object(entry, (d) => d.attested_header.beacon.slot)!);
    },
    finalityUpdate: () => object(attempt('/eth/v1/beacon/light_client/finality_update'), (d) => d.attested_header.beacon.slot),
    optimisticUpdate: () => object(attempt('/eth/v1/beacon/light_client/optimistic_update'), (d) => d.attested_header.beacon.slot),
  };
}

export interface DevnetBeaconPeerOptions {
  readonly chain: DevnetBeaconChain;
  readonly head: () => number;
  readonly seed: string;
  readonly host: string;
  /** TCP and UDP port (0: a free TCP port, UDP the same number). */
  readonly port: number;
  /** Light-client data to serve instead of the devnet's own (tests: a peer that serves tampered objects). */
  readonly data?: LightClientData;
  /** Ping interval to each connected peer (default 15 s). */
  readonly pingIntervalMs?: number;
  readonly onError?: (error: Error) => void;
}

/** The devnet beacon chain's Status: its head slot and block, its finalized checkpoint (genesis: the zero root). */
export function devnetChainStatus(chain: DevnetBeaconChain, head: number): LocalChainStatus {
  const headSlot = chain.slot(head);
  const finalizedSlot = chain.finalizedSlotAt(head);
  const finalizedRoot = finalizedSlot === 0 ? new Uint8Array(32) : chain.epochRoot(finalizedSlot);
  return {
    finalizedRoot, finalizedEpoch: epochAtSlot(chain.config, finalizedSlot), headRoot: headSlot?.root ?? new Uint8Array(32), headSlot: head,
    earliestAvailableSlot: head,
  };
}

export async function startDevnetBeaconPeer(options: DevnetBeaconPeerOptions): Promise<DevnetBeaconPeer> {
  const config = options.chain.config;
  const key = devnetBeaconPeerKey(options.seed);
  const host = await createConsensusHost({ privateKey: key, host: options.host, port: options.port, publishToZeroPeers: true });
  await host.start();
  const data = options.data ?? devnetLightClientData(options.chain, options.head);
  const slotNow = () => currentSlot(config, Date.now());
  let server: LightClientServer | null = null;
  let discovery: Discv5Service | null = null;
  let protocols: PeerProtocols | null = null;
  try {
    const log = { info: () => undefined, warn: () => undefined };
    protocols = await startPeerProtocols({
      host, config, schedule: NO_BLOB_SCHEDULE, chain: () => devnetChainStatus(options.chain, options.head()), requestTimeoutMs: 5_000,
      pingIntervalMs: options.pingIntervalMs ?? 15_000, log,
    });
    server = await serveLightClientData({ host, config, schedule: NO_BLOB_SCHEDULE, data, currentSlot: slotNow, onError: options.onError });
    // Serving peers subscribe to the topics they publish on, so the mesh forms with light clients that subscribe too.
    for (const topic of server.topics()) host.services.pubsub.subscribe(topic);
    const tcpPort = Number(host.getMultiaddrs()[0]?.toOptions().port ?? options.port);
    discovery = await startDiscv5({
      privateKey: key, host: options.host, udpPort: tcpPort, tcpPort, bootnodes: [],
      recordEntries: new Map([['eth2', enrForkId(config, NO_BLOB_SCHEDULE, epochAtSlot(config, slotNow()))]]),
      lookupIntervalMs: 60_000, lookupTimeoutMs: 5_000, onNode: () => undefined,
      onError: (error) => options.onError?.(error),
    });
    let lastFinalizedSlot = -1;
    const running = server;
    const started = discovery;
    const talking = protocols;
    return {
      protocols: talking,
      enr: started.enr,
      peerId: host.peerId.toString(),
      tcpPort,
      headChanged() {
        void (async () => {
          const finality = data.finalityUpdate();
          const finalizedSlot = Number((finality?.data as { finalized_header?: { beacon?: { slot?: string } } } | undefined)?.finalized_header?.beacon?.slot ?? -1);
          if (finality && finalizedSlot !== lastFinalizedSlot) {
            lastFinalizedSlot = finalizedSlot;
            await running.publishFinalityUpdate();
          }
          await running.publishOptimisticUpdate();
        })().catch((error: unknown) => options.onError?.(error as Error));
      },
      async close() {
        await talking.stop();
        await started.stop();
        await running.stop();
        await host.stop();
      },
    };
  } catch (error) {
    await protocols?.stop();
    await discovery?.stop();
    await host.stop();
    throw error;
  }
}
