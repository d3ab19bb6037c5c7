/**
 * The finality lane's settings from `[finality]`: the `beacon_api` backend's endpoints, and in
 * light-client mode the beacon chain whose sync committees sign (mainnet built in; the devnet's
 * derived from `[devnet]`). A checkpoint root for a chain the node has no beacon parameters for
 * is refused at start naming the key.
 */
import { chainConfigToData, MAINNET, type BeaconChainConfig } from '../../net/beacon/config.js';
import { MAINNET_CONSENSUS_BOOTNODES } from '../../net/beacon/p2p/mainnet-bootnodes.js';
import { devnetBeaconPeerEnr } from '../../net/devnet/beacon-p2p-identity.js';
import { devnetBeaconConfig } from '../../net/devnet/beacon-chain.js';
import { resolveDevnetConfig } from '../../net/devnet/index.js';
import type { Hex } from '../../net/eth/hex.js';
import type { FinalityArgs } from './actor.js';
import type { ChainSpec } from '../node/chain-spec.js';
import { devnetInput } from '../node/chain-spec.js';
import { ConfigError } from '../node/config.js';
import type { NodeConfig } from '../node/config-schema.js';

/**
 * `consensus_p2p`'s bootnodes: `finality.bootnodes`, else mainnet's embedded ones, else on the devnet its own consensus
 * peer's record (`devnet.beacon_p2p`, known before it starts: its key derives from the seed).
 */
function consensusBootnodes(config: NodeConfig, spec: ChainSpec, chain: BeaconChainConfig): string[] {
  const f = config.finality;
  if (f.bootnodes.length > 0) return f.bootnodes;
  if (spec.network === 'mainnet') return [...MAINNET_CONSENSUS_BOOTNODES];
  const served = config.devnet.beacon_p2p;
  const port = Number(served.split(':')[1] ?? 0);
  if (spec.network === 'devnet' && served !== '' && port > 0) {
    return [devnetBeaconPeerEnr(chain, String(resolveDevnetConfig(devnetInput(config)).seed), served.split(':')[0]!, port)];
  }
  throw new ConfigError([{
    key: 'finality.bootnodes', value: '[]',
    expected: 'at least one consensus bootnode record ("enr:…"); only mainnet has embedded bootnodes, and the devnet\'s own peer needs devnet.beacon_p2p with a fixed port',
  }]);
}

export function finalityArgs(config: NodeConfig, spec: ChainSpec): FinalityArgs {
  const f = config.finality;
  if (f.kind !== 'beacon_api' && f.kind !== 'consensus_p2p') return { kind: f.kind, pollIntervalMs: f.poll_interval_ms };
  let lightClient = null;
  let chain: BeaconChainConfig | null = null;
  if (f.checkpoint_root !== '') {
    chain = spec.network === 'mainnet' ? MAINNET : spec.network === 'devnet' ? devnetBeaconConfig(resolveDevnetConfig(devnetInput(config))) : null;
    if (!chain) {
      throw new ConfigError([{ key: 'finality.checkpoint_root', value: JSON.stringify(f.checkpoint_root), expected: `a chain with built-in beacon parameters (mainnet or the devnet); this node serves ${spec.network}` }]);
    }
    lightClient = { checkpointRoot: f.checkpoint_root.toLowerCase() as Hex, chain: chainConfigToData(chain) };
  }
  if (f.kind === 'consensus_p2p') {
    // The schema refuses consensus_p2p without both checkpoint keys; this is the same rule for callers that skip it.
    if (!lightClient || !chain || f.checkpoint_slot === undefined) {
      throw new ConfigError([{ key: 'finality.checkpoint_root', value: JSON.stringify(f.checkpoint_root), expected: 'with finality.checkpoint_slot: the weak-subjectivity checkpoint consensus_p2p starts from' }]);
    }
    return {
      kind: 'consensus_p2p',
      pollIntervalMs: f.poll_interval_ms,
      beacon: {
        urls: [], minimumAgreement: 1, requestTimeoutMs: f.request_timeout_ms, maxRetries: 0, backoffInitialMs: f.backoff_initial_ms, backoffMaxMs: f.backoff_max_ms,
        eventStream: false, lightClient,
      },
      p2p: {
        host: f.p2p_host, tcpPort: f.p2p_port, udpPort: f.discovery_port, bootnodes: consensusBootnodes(config, spec, chain), checkpointSlot: f.checkpoint_slot,
        maxPeers: f.max_peers, blobSchedule: spec.network === 'mainnet' ? 'mainnet' : 'none',
      },
    };
  }
  return {
    kind: 'beacon_api',
    pollIntervalMs: f.poll_interval_ms,
    beacon: {
      urls: f.urls, minimumAgreement: f.minimum_agreement, requestTimeoutMs: f.request_timeout_ms, maxRetries: f.max_retries,
      backoffInitialMs: f.backoff_initial_ms, backoffMaxMs: f.backoff_max_ms, eventStream: f.event_stream, lightClient,
    },
  };
}
