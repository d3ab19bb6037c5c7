/** The node's `eth` status and the check of a peer's: same network id, same genesis, EIP-2124 fork id compatible. */
import { checkForkId, forkId } from '../eth/fork-id.js';
import type { BlockPosition, ForkSchedule } from '../eth/fork-schedule.js';
import type { Hash } from '../eth/hex.js';
import type { EthStatus } from './eth-messages.js';

export interface ChainIdentity {
  readonly chainId: number;
  readonly schedule: ForkSchedule;
  readonly genesis: { readonly hash: Hash; readonly timestamp: number };
}

export interface LocalHead extends BlockPosition {
  readonly hash: Hash;
  /** Oldest block this node serves (eth/69 `earliest`). */
  readonly earliest: number;
}

export function localStatus(chain: ChainIdentity, head: LocalHead): Omit<EthStatus, 'version'> {
  return {
    networkId: BigInt(chain.chainId), genesis: chain.genesis.hash, forkId: forkId(chain.schedule, chain.genesis, head),
    totalDifficulty: 0n, head: head.hash, earliest: head.earliest, latest: head.number,
  };
}

/** Why a remote status is refused, or null. `head` is where the local chain is (for the fork id rule). */
export function refuseStatus(chain: ChainIdentity, head: BlockPosition, remote: EthStatus): string | null {
  if (remote.networkId !== BigInt(chain.chainId)) return `network id ${remote.networkId} (this node follows ${chain.chainId})`;
  if (remote.genesis.toLowerCase() !== chain.genesis.hash.toLowerCase()) return `genesis ${remote.genesis} (this chain's is ${chain.genesis.hash})`;
  const check = checkForkId(chain.schedule, chain.genesis, head, remote.forkId);
  if (!check.ok) return `fork id ${remote.forkId.hash}/${remote.forkId.next} rejected (${check.reason})`;
  if (remote.version === 69 && remote.latest !== undefined && remote.earliest !== undefined && remote.earliest > remote.latest) return `status range ${remote.earliest}..${remote.latest} is empty`;
  return null;
}
