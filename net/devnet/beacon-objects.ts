/**
 * The devnet's beacon chain, derived deterministically from its execution chain: beacon slot n
 * carries execution block n, its block body commits to the execution payload header (proof at
 * EXECUTION_PAYLOAD_GINDEX), its state commits to the finalized checkpoint and the current and next
 * sync committees (Electra generalized indices), and a sync committee of 32 keys derived from the
 * seed signs every attested header. Committees rotate every period through four key sets (so a
 * client must follow each hand-over, while a long-running devnet derives at most four sets). Finality is the first slot of the epoch at or below
 * `finality_lag` blocks under the attested one, so it never outruns the devnet's own finality.
 *
 * Simplifications (documented, not hidden): the header's parent_root is derived from the execution
 * parent hash instead of linking beacon headers, the state and body hold only the fields the
 * light-client proofs reach (all other leaves zero), and the payload header's `transactions_root`/
 * `withdrawals_root` are the execution trie roots rather than SSZ list roots. Every proof a light
 * client checks — execution branch, finality branch, sync committee branches, the aggregate
 * signature under the devnet's fork version and genesis validators root — is real.
 */
import { sha256 } from '@noble/hashes/sha2.js';
import { bls12_381 as bls } from '@noble/curves/bls12-381.js';
import { aggregatePublicKeys, publicKeyOf, signMessage } from '../beacon/bls.js';
import { epochAtSlot, periodAtSlot, type BeaconChainConfig } from '../beacon/config.js';
import { SparseTree, uint64Leaf } from '../beacon/sparse-tree.js';
import { BeaconBlockHeader, DenebExecutionPayloadHeader, syncCommitteeType, type BeaconBlockHeaderValue, type ExecutionPayloadHeaderValue, type SyncCommitteeValue } from '../beacon/ssz.js';
import { beaconHeaderRoot, syncCommitteeSigningRoot } from '../beacon/sync-protocol.js';
import type { LightClientHeader } from '../beacon/types.js';
import { bytesToHex, hexToBytes, type Hex } from '../eth/hex.js';
import type { BlockHeader } from '../eth/header.js';

const STATE_DEPTH = 7;
const FINALIZED_EPOCH_GINDEX = 168;
const FINALIZED_ROOT_GINDEX = 169;
const CURRENT_COMMITTEE_GINDEX = 86;
const NEXT_COMMITTEE_GINDEX = 87;
const STATE_SLOT_GINDEX = 66;
const BODY_DEPTH = 4;
const EXECUTION_PAYLOAD_GINDEX = 25;
const PROPOSERS = 64;
const COMMITTEE_KEY_SETS = 4;

export interface ExecutionBlockSource {
  /** The canonical execution block at a number (its header and hash), if the devnet has it. */
  blockAt(number: number): { header: BlockHeader; hash: Hex } | undefined;
  /** The devnet's canonical head number. */
  head(): number;
}

interface Committee {
  readonly value: SyncCommitteeValue;
  /** Σ secret keys mod r: signing with it gives the aggregate of every member's signature. */
  readonly aggregateSecret: Uint8Array;
}

export interface BeaconSlot {
  readonly header: LightClientHeader;
  readonly root: Uint8Array;
  readonly stateTree: SparseTree;
}

const encoder = new TextEncoder();
const tag = (text: string) => sha256(encoder.encode(text));

function executionHeaderOf(header: BlockHeader, hash: Hex): ExecutionPayloadHeaderValue {
  const zero = `0x${'00'.repeat(32)}`;
  return {
    parentHash: hexToBytes(header.parentHash, 32), feeRecipient: hexToBytes(header.miner, 20), stateRoot: hexToBytes(header.stateRoot, 32),
    receiptsRoot: hexToBytes(header.receiptsRoot, 32), logsBloom: hexToBytes(header.logsBloom, 256), prevRandao: hexToBytes(header.mixHash, 32),
    blockNumber: header.number, gasLimit: Number(header.gasLimit), gasUsed: Number(header.gasUsed), timestamp: header.timestamp,
    extraData: hexToBytes(header.extraData), baseFeePerGas: header.baseFeePerGas ?? 0n, blockHash: hexToBytes(hash, 32),
    transactionsRoot: hexToBytes(header.transactionsRoot, 32), withdrawalsRoot: hexToBytes(header.withdrawalsRoot ?? zero, 32),
    blobGasUsed: Number(header.blobGasUsed ?? 0n), excessBlobGas: Number(header.excessBlobGas ?? 0n),
  };
}

export class DevnetBeaconChain {
  private readonly committees = new Map<number, Committee>();
  /** Block roots handed out, for lookups by root (bounded: oldest dropped first). */
  private readonly slotsByRoot = new Map<Hex, number>();
  /** Roots of epoch-start headers (the only finalized targets) with the execution hash they carry. */
  private readonly epochRoots = new Map<number, { hash: Hex; root: Uint8Array }>();

  constructor(readonly config: BeaconChainConfig, private readonly source: ExecutionBlockSource, private readonly seedTag: string, private readonly lag: number) {}

  committee(period: number): Committee {
    const keySet = period % COMMITTEE_KEY_SETS;
    let committee = this.committees.get(keySet);
    if (!committee) {
      const period = keySet;
      const order = bls.fields.Fr.ORDER;
      let sum = 0n;
      const pubkeys: Uint8Array[] = [];
      for (let i = 0; i < this.config.syncCommitteeSize; i++) {
        const secret = (BigInt(bytesToHex(tag(`devnet sync committee|${this.seedTag}|${period}|${i}`))) % (order - 1n)) + 1n;
        sum = (sum + secret) % order;
        pubkeys.push(publicKeyOf(hexToBytes(`0x${secret.toString(16).padStart(64, '0')}`, 32)));
      }
      committee = { value: { pubkeys, aggregatePubkey: aggregatePublicKeys(pubkeys) }, aggregateSecret: hexToBytes(`0x${sum.toString(16).padStart(64, '0')}`, 32) };
      this.committees.set(keySet, committee);
    }
    return committee;
  }

  /** The finalized slot the state at `slot` records: an epoch start at least `lag` slots below it. */
  finalizedSlotAt(slot: number): number {
    const below = Math.max(0, slot - this.lag);
    return Math.floor(below / this.config.slotsPerEpoch) * this.config.slotsPerEpoch;
  }

  /** The beacon block at `slot` (null when the devnet has no block there yet). */
  slot(slot: number): BeaconSlot | null {
    const block = this.source.blockAt(slot);
    if (!block) return null;
    const execution = executionHeaderOf(block.header, block.hash);
    const body = new SparseTree(BODY_DEPTH, new Map([[EXECUTION_PAYLOAD_GINDEX, DenebExecutionPayloadHeader.hashTreeRoot(execution)], [16, tag(`randao|${this.seedTag}|${slot}`)]]));
    const period = periodAtSlot(this.config, slot);
    const committeeType = syncCommitteeType(this.config.syncCommitteeSize);
    const finalizedSlot = this.finalizedSlotAt(slot);
    // Genesis as the finalized checkpoint is the zero root (phase0 `get_genesis_beacon_state`).
    const finalizedRoot = finalizedSlot === 0 ? new Uint8Array(32) : this.epochRoot(finalizedSlot);
    const state = new SparseTree(STATE_DEPTH, new Map([
      [STATE_SLOT_GINDEX, uint64Leaf(slot)],
      [FINALIZED_EPOCH_GINDEX, uint64Leaf(epochAtSlot(this.config, finalizedSlot))],
      [FINALIZED_ROOT_GINDEX, finalizedRoot],
      [CURRENT_COMMITTEE_GINDEX, committeeType.hashTreeRoot(this.committee(period).value)],
      [NEXT_COMMITTEE_GINDEX, committeeType.hashTreeRoot(this.committee(period + 1).value)],
    ]));
    const beacon: BeaconBlockHeaderValue = {
      slot, proposerIndex: slot % PROPOSERS, parentRoot: tag(`parent|${block.header.parentHash}`), stateRoot: state.root(), bodyRoot: body.root(),
    };
    const header: LightClientHeader = { beacon, execution, executionBranch: body.branch(EXECUTION_PAYLOAD_GINDEX) };
    const root = beaconHeaderRoot(header);
    this.remember(root, slot);
    return { header, root, stateTree: state };
  }

  /**
   * The header root of an epoch-start slot, computed upward from the highest one known so each
   * header's own finalized checkpoint is already there (no deep recursion on a long chain).
   */
  epochRoot(slot: number): Uint8Array {
    const step = this.config.slotsPerEpoch;
    const known = (s: number) => {
      const entry = this.epochRoots.get(s);
      return entry !== undefined && entry.hash === this.source.blockAt(s)?.hash ? entry.root : null;
    };
    let from = slot;
    while (from > 0 && known(from - step) === null) from -= step;
    for (let s = from; s <= slot; s += step) {
      if (known(s)) continue;
      const computed = this.slot(s);
      if (!computed) throw new Error(`the devnet has no block at finalized slot ${s}`);
      this.epochRoots.set(s, { hash: this.source.blockAt(s)!.hash, root: computed.root });
    }
    return known(slot)!;
  }

  slotOfRoot(root: Hex): number | undefined {
    return this.slotsByRoot.get(root.toLowerCase() as Hex);
  }

  private remember(root: Uint8Array, slot: number): void {
    const hex = bytesToHex(root);
    if (this.slotsByRoot.has(hex)) return;
    this.slotsByRoot.set(hex, slot);
    if (this.slotsByRoot.size > 65_536) this.slotsByRoot.delete(this.slotsByRoot.keys().next().value!);
  }

  /** The aggregate signature of the whole committee of `signatureSlot`'s period over `attested`. */
  sign(attested: LightClientHeader, signatureSlot: number): { bits: Uint8Array; signature: Uint8Array } {
    const committee = this.committee(periodAtSlot(this.config, signatureSlot));
    const signingRoot = syncCommitteeSigningRoot(this.config, attested, signatureSlot);
    return { bits: new Uint8Array(this.config.syncCommitteeSize / 8).fill(0xff), signature: signMessage(committee.aggregateSecret, signingRoot) };
  }

  json = {
    header: (header: LightClientHeader) => ({
      beacon: BeaconBlockHeader.toJson(header.beacon),
      execution: DenebExecutionPayloadHeader.toJson(header.execution!),
      execution_branch: header.executionBranch.map(bytesToHex),
    }),
    committee: (committee: SyncCommitteeValue) => syncCommitteeType(this.config.syncCommitteeSize).toJson(committee),
  };
}
