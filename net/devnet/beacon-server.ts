/**
 * The devnet's Beacon-API-shaped endpoint (node:http, loopback by default): the finalized checkpoint
 * and blocks with their execution payload (for `finality.kind = "beacon_api"` by agreement), and the
 * light-client routes signed by the devnet's sync committee (for `finality.checkpoint_root`):
 *
 *   GET /eth/v1/beacon/genesis
 *   GET /eth/v1/beacon/states/{state_id}/finality_checkpoints   (head)
 *   GET /eth/v1/beacon/headers/{block_id}                        (head | finalized | genesis | slot | 0x root)
 *   GET /eth/v2/beacon/blocks/{block_id}
 *   GET /eth/v1/beacon/light_client/bootstrap/{block_root}
 *   GET /eth/v1/beacon/light_client/updates?start_period=&count=
 *   GET /eth/v1/beacon/light_client/finality_update
 *   GET /eth/v1/beacon/light_client/optimistic_update
 *   GET /eth/v1/events?topics=finalized_checkpoint,light_client_finality_update,light_client_optimistic_update
 *       (text/event-stream; an event when the head moves: finalized_checkpoint and the finality update when the
 *       finalized checkpoint changes, the optimistic update on every head)
 */
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { periodAtSlot } from '../beacon/config.js';
import { BeaconBlockHeader, DenebExecutionPayloadHeader } from '../beacon/ssz.js';
import type { LightClientHeader } from '../beacon/types.js';
import { bytesToHex, type Hex } from '../eth/hex.js';
import type { BeaconSlot, DevnetBeaconChain } from './beacon-objects.js';

const FINALIZED_ROOT_GINDEX = 169;
const CURRENT_COMMITTEE_GINDEX = 86;
const NEXT_COMMITTEE_GINDEX = 87;
const MAX_UPDATES = 128;
const VERSION = 'electra';

class HttpError extends Error {
  constructor(readonly status: number, message: string) {
    super(message);
  }
}

export interface DevnetBeaconServer {
  readonly url: string;
  /** The devnet's head moved: event-stream subscribers get what changed. */
  headChanged(): void;
  close(): Promise<void>;
}

export const EVENT_TOPICS = ['finalized_checkpoint', 'light_client_finality_update', 'light_client_optimistic_update'] as const;
export type EventTopic = (typeof EVENT_TOPICS)[number];

export function createDevnetBeaconApi(chain: DevnetBeaconChain, head: () => number) {
  const zeroHeader = (): LightClientHeader => ({
    beacon: BeaconBlockHeader.defaultValue(), execution: DenebExecutionPayloadHeader.defaultValue(), executionBranch: Array.from({ length: 4 }, () => new Uint8Array(32)),
  });
  const headerJson = (header: LightClientHeader) => chain.json.header(header);

  function slotOrFail(slot: number): BeaconSlot {
    const found = chain.slot(slot);
    if (!found) throw new HttpError(404, `no block at slot ${slot}`);
    return found;
  }

  /** The slot a block id names: head, finalized, genesis, a decimal slot or a block root handed out before. */
  function resolveBlockId(id: string): number {
    const top = head();
    if (id === 'head') return top;
    if (id === 'genesis') return 0;
    if (id === 'finalized') return chain.finalizedSlotAt(Math.max(0, top - 1));
    if (/^\d{1,15}$/.test(id)) {
      const slot = Number(id);
      if (slot > top) throw new HttpError(404, `slot ${slot} is after the head ${top}`);
      return slot;
    }
    if (/^0x[0-9a-fA-F]{64}$/.test(id)) {
      let slot = chain.slotOfRoot(id as Hex);
      if (slot === undefined) {
        // Fill the epoch-start roots (every finalized checkpoint) and the genesis root, then look again.
        chain.slot(0);
        if (top > 0) chain.epochRoot(chain.finalizedSlotAt(top - 1));
        slot = chain.slotOfRoot(id as Hex);
      }
      if (slot === undefined) throw new HttpError(404, `unknown block root ${id}`);
      return slot;
    }
    throw new HttpError(400, `invalid block id ${id}`);
  }

  function signed(attestedSlot: number) {
    const attested = slotOrFail(attestedSlot);
    const signatureSlot = attestedSlot + 1;
    const { bits, signature } = chain.sign(attested.header, signatureSlot);
    const finalizedSlot = chain.finalizedSlotAt(attestedSlot);
    const finalized = finalizedSlot === 0 ? zeroHeader() : slotOrFail(finalizedSlot).header;
    return {
      attested,
      finalizedJson: headerJson(finalized),
      base: {
        attested_header: headerJson(attested.header),
        sync_aggregate: { sync_committee_bits: bytesToHex(bits), sync_committee_signature: bytesToHex(signature) },
        signature_slot: String(signatureSlot),
      },
    };
  }

  /** The finality update of the newest head asked for (signing is the costly part: once per head). */
  let lastUpdate: { key: string; update: ReturnType<typeof buildFinalityUpdate> } | null = null;
  function finalityUpdate() {
    const top = head();
    // Keyed by the attested block too: a reorg replaces blocks at the same heights.
    const key = top < 1 ? '' : `${top}:${bytesToHex(slotOrFail(top - 1).root)}`;
    if (lastUpdate?.key !== key) lastUpdate = { key, update: buildFinalityUpdate(top) };
    return lastUpdate.update;
  }

  function buildFinalityUpdate(top: number) {
    if (top < 1) throw new HttpError(404, 'no finality update before the first block');
    const { attested, finalizedJson, base } = signed(top - 1);
    return { version: VERSION, data: { attested_header: base.attested_header, finalized_header: finalizedJson, finality_branch: attested.stateTree.branch(FINALIZED_ROOT_GINDEX).map(bytesToHex), sync_aggregate: base.sync_aggregate, signature_slot: base.signature_slot } };
  }

  /** The update of `period`: attested at the period's next-to-last slot (or under the head), signed within the period. */
  function periodUpdate(period: number) {
    const slotsPerPeriod = chain.config.slotsPerEpoch * chain.config.epochsPerSyncCommitteePeriod;
    const top = head();
    const attestedSlot = Math.min((period + 1) * slotsPerPeriod - 2, top - 1);
    if (attestedSlot < period * slotsPerPeriod) return null;
    const { attested, finalizedJson, base } = signed(attestedSlot);
    const next = chain.committee(periodAtSlot(chain.config, attestedSlot) + 1).value;
    return {
      version: VERSION,
      data: {
        attested_header: base.attested_header,
        next_sync_committee: chain.json.committee(next),
        next_sync_committee_branch: attested.stateTree.branch(NEXT_COMMITTEE_GINDEX).map(bytesToHex),
        finalized_header: finalizedJson,
        finality_branch: attested.stateTree.branch(FINALIZED_ROOT_GINDEX).map(bytesToHex),
        sync_aggregate: base.sync_aggregate,
        signature_slot: base.signature_slot,
      },
    };
  }

  function integerParam(params: URLSearchParams, name: string): number {
    const text = params.get(name);
    if (text === null || !/^\d{1,15}$/.test(text)) throw new HttpError(400, `query parameter ${name}: expected a decimal integer`);
    return Number(text);
  }

  /** The Beacon API `finalized_checkpoint` event for the head (null before the first finalized epoch). */
  function finalizedCheckpointEvent() {
    const top = head();
    const finalizedSlot = chain.finalizedSlotAt(Math.max(0, top - 1));
    if (finalizedSlot === 0) return null;
    const found = slotOrFail(finalizedSlot);
    return { block: bytesToHex(found.root), state: bytesToHex(found.header.beacon.stateRoot), epoch: String(Math.floor(finalizedSlot / chain.config.slotsPerEpoch)), execution_optimistic: false };
  }

  function optimisticUpdate() {
    const { data, version } = finalityUpdate();
    return { version, data: { attested_header: data.attested_header, sync_aggregate: data.sync_aggregate, signature_slot: data.signature_slot } };
  }

  const events = {
    finalizedSlot: () => chain.finalizedSlotAt(Math.max(0, head() - 1)),
    finalizedCheckpoint: finalizedCheckpointEvent,
    finalityUpdate,
    optimisticUpdate,
  };

  function route(path: string, params: URLSearchParams): unknown {
    const parts = path.split('/').filter((p) => p !== '');
    const at = (i: number) => parts[i] ?? '';
    const joined = parts.join('/');
    if (joined === 'eth/v1/beacon/genesis') {
      return { data: { genesis_time: String(chain.config.genesisTime), genesis_validators_root: bytesToHex(chain.config.genesisValidatorsRoot), genesis_fork_version: bytesToHex(chain.config.forks[0]!.version) } };
    }
    if (parts.length === 6 && joined.startsWith('eth/v1/beacon/states/') && at(5) === 'finality_checkpoints') {
      if (at(4) !== 'head') throw new HttpError(400, 'only the head state is served');
      const top = head();
      const finalizedSlot = chain.finalizedSlotAt(Math.max(0, top - 1));
      const root = finalizedSlot === 0 ? new Uint8Array(32) : chain.epochRoot(finalizedSlot);
      const checkpoint = (slot: number, r: Uint8Array) => ({ epoch: String(Math.floor(slot / chain.config.slotsPerEpoch)), root: bytesToHex(r) });
      const justified = checkpoint(finalizedSlot, root);
      return { execution_optimistic: false, finalized: true, data: { previous_justified: justified, current_justified: justified, finalized: checkpoint(finalizedSlot, root) } };
    }
    if (parts.length === 5 && joined.startsWith('eth/v1/beacon/headers/')) {
      const slot = resolveBlockId(at(4));
      const found = slotOrFail(slot);
      return { execution_optimistic: false, finalized: slot <= chain.finalizedSlotAt(Math.max(0, head() - 1)), data: { root: bytesToHex(found.root), canonical: true, header: { message: BeaconBlockHeader.toJson(found.header.beacon), signature: `0x${'00'.repeat(96)}` } } };
    }
    if (parts.length === 5 && joined.startsWith('eth/v2/beacon/blocks/')) {
      const slot = resolveBlockId(at(4));
      const found = slotOrFail(slot);
      const beacon = BeaconBlockHeader.toJson(found.header.beacon) as Record<string, unknown>;
      const message = { slot: beacon.slot, proposer_index: beacon.proposer_index, parent_root: beacon.parent_root, state_root: beacon.state_root, body: { execution_payload: DenebExecutionPayloadHeader.toJson(found.header.execution!) } };
      return { version: VERSION, execution_optimistic: false, finalized: slot <= chain.finalizedSlotAt(Math.max(0, head() - 1)), data: { message, signature: `0x${'00'.repeat(96)}` } };
    }
    if (parts.length === 6 && joined.startsWith('eth/v1/beacon/light_client/bootstrap/')) {
      const slot = resolveBlockId(at(5));
      const found = slotOrFail(slot);
      const committee = chain.committee(periodAtSlot(chain.config, slot)).value;
      return { version: VERSION, data: { header: headerJson(found.header), current_sync_committee: chain.json.committee(committee), current_sync_committee_branch: found.stateTree.branch(CURRENT_COMMITTEE_GINDEX).map(bytesToHex) } };
    }
    if (joined === 'eth/v1/beacon/light_client/updates') {
      const start = integerParam(params, 'start_period');
      const count = Math.min(MAX_UPDATES, integerParam(params, 'count'));
      const updates = [];
      for (let period = start; period < start + count; period++) {
        const update = periodUpdate(period);
        if (!update) break;
        updates.push(update);
      }
      return updates;
    }
    if (joined === 'eth/v1/beacon/light_client/finality_update') return finalityUpdate();
    if (joined === 'eth/v1/beacon/light_client/optimistic_update') return optimisticUpdate();
    throw new HttpError(404, `no route ${path}`);
  }
  return Object.assign(route, { events });
}

/** The topics of an events request, or an HttpError naming the one this endpoint does not serve. */
function eventTopics(params: URLSearchParams): Set<EventTopic> {
  const topics = new Set<EventTopic>();
  for (const topic of (params.getAll('topics').join(',')).split(',').map((t) => t.trim()).filter((t) => t !== '')) {
    const known = EVENT_TOPICS.find((t) => t === topic);
    if (!known) throw new HttpError(400, `unknown or unsupported event topic ${JSON.stringify(topic.slice(0, 64))}; served: ${EVENT_TOPICS.join(', ')}`);
    topics.add(known);
  }
  if (topics.size === 0) throw new HttpError(400, 'query parameter topics: at least one topic');
  return topics;
}

/** Serves the devnet's Beacon API on `host:port` (port 0: a free one). */
export async function startDevnetBeaconServer(address: string, chain: DevnetBeaconChain, head: () => number): Promise<DevnetBeaconServer> {
  const route = createDevnetBeaconApi(chain, head);
  const subscribers = new Set<{ response: ServerResponse; topics: Set<EventTopic> }>();
  let lastFinalizedSlot = -1;
  const server: Server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://devnet');
    let status = 200;
    let body: unknown;
    if (request.method === 'GET' && url.pathname.replace(/\/+$/, '') === '/eth/v1/events') {
      try {
        const subscriber = { response, topics: eventTopics(url.searchParams) };
        response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
        response.write(': devnet beacon events\n\n');
        subscribers.add(subscriber);
        response.on('close', () => subscribers.delete(subscriber));
      } catch (error) {
        const code = error instanceof HttpError ? error.status : 500;
        response.writeHead(code, { 'content-type': 'application/json' }).end(JSON.stringify({ code, message: (error as Error).message }));
      }
      return;
    }
    if (request.method !== 'GET') {
      status = 405;
      body = { code: 405, message: 'only GET is served' };
    } else {
      try {
        body = route(url.pathname, url.searchParams);
      } catch (error) {
        status = error instanceof HttpError ? error.status : 500;
        body = { code: status, message: (error as Error).message };
      }
    }
    response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  });
  const colon = address.lastIndexOf(':');
  const host = address.slice(0, colon).replace(/^\[|\]$/g, '');
  const port = Number(address.slice(colon + 1));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const bound = server.address() as AddressInfo;
  const send = (topic: EventTopic, data: () => unknown) => {
    let frame: string | null = null;
    for (const subscriber of subscribers) {
      if (!subscriber.topics.has(topic)) continue;
      frame ??= `event: ${topic}\ndata: ${JSON.stringify(data())}\n\n`;
      subscriber.response.write(frame);
    }
  };
  return {
    url: `http://${bound.family === 'IPv6' ? `[${bound.address}]` : bound.address}:${bound.port}`,
    headChanged() {
      if (subscribers.size === 0 || head() < 1) return;
      try {
        const finalizedSlot = route.events.finalizedSlot();
        if (finalizedSlot !== lastFinalizedSlot) {
          lastFinalizedSlot = finalizedSlot;
          const checkpoint = route.events.finalizedCheckpoint();
          if (checkpoint) send('finalized_checkpoint', () => checkpoint);
          send('light_client_finality_update', route.events.finalityUpdate);
        }
        send('light_client_optimistic_update', route.events.optimisticUpdate);
      } catch {
        // A block the endpoint cannot serve yet (a head that is being replaced): the next head says it again.
      }
    },
    close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
}
