/**
 * The finality lane's settings from `[finality]`: the `beacon_api` backend's endpoints, and in
 * light-client mode the beacon chain whose sync committees sign (mainnet built in; the devnet's
 * derived from `[devnet]`). A checkpoint root for a chain the node has no beacon parameters for
 * is refused at start naming the key.
 */
import { chainConfigToData, MAINNET } from '../../net/beacon/config.js';
import { devnetBeaconConfig } from '../../net/devnet/beacon-chain.js';
import { resolveDevnetConfig } from '../../net/devnet/index.js';
import type { Hex } from '../../net/eth/hex.js';
import type { FinalityArgs } from '../finality.js';
import type { ChainSpec } from '../node/chain-spec.js';
import { devnetInput } from '../node/chain-spec.js';
import { ConfigError } from '../node/config.js';
import type { NodeConfig } from '../node/config-schema.js';

export function finalityArgs(config: NodeConfig, spec: ChainSpec): FinalityArgs {
  const f = config.finality;
  if (f.kind === 'consensus_p2p') throw new ConfigError([{ key: 'finality.kind', value: '"consensus_p2p"', expected: 'a finality backend this build has (consensus_p2p is not implemented)' }]);
  if (f.kind !== 'beacon_api') return { kind: f.kind, pollIntervalMs: f.poll_interval_ms };
  let lightClient = null;
  if (f.checkpoint_root !== '') {
    const chain = spec.network === 'mainnet' ? MAINNET : spec.network === 'devnet' ? devnetBeaconConfig(resolveDevnetConfig(devnetInput(config))) : null;
    if (!chain) {
      throw new ConfigError([{ key: 'finality.checkpoint_root', value: JSON.stringify(f.checkpoint_root), expected: `a chain with built-in beacon parameters (mainnet or the devnet); this node serves ${spec.network}` }]);
    }
    lightClient = { checkpointRoot: f.checkpoint_root.toLowerCase() as Hex, chain: chainConfigToData(chain) };
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
