/**
 * Serving light-client data over the consensus p2p Req/Resp domain (`light_client_bootstrap`,
 * `light_client_updates_by_range`, `light_client_finality_update`, `light_client_optimistic_update`) and publishing
 * finality and optimistic updates on their gossip topics. The data comes as Beacon API JSON with the slot whose fork
 * decides its SSZ shape and context bytes (the bootstrap header's slot, an update's attested slot); the devnet's
 * beacon chain is served this way (net/devnet/beacon-p2p.ts), and so is a test's tampered peer.
 */
import { epochAtSlot, forkAtEpoch, type BeaconChainConfig } from '../config.js';
import type { BlobSchedule } from './fork-digest.js';
import { digestAtSlot } from './fork-digest.js';
import { gossipTopic, type ConsensusHost } from './host.js';
import { jsonToSsz, UpdatesByRangeRequest, type LightClientKind } from './light-client-ssz.js';
import {
  decodeRequest, encodeErrorChunk, encodeSuccessChunk, LIGHT_CLIENT_PROTOCOLS, MAX_REQUEST_LIGHT_CLIENT_UPDATES, readAll, RESULT,
} from './req-resp.js';
import { concat } from './snappy-frames.js';

/** A light-client object in Beacon API JSON (`data`), with the slot of its context epoch. */
export interface ServedObject {
  readonly slot: number;
  readonly data: unknown;
}

export interface LightClientData {
  bootstrap(root: Uint8Array): ServedObject | null;
  updates(startPeriod: number, count: number): ServedObject[];
  finalityUpdate(): ServedObject | null;
  optimisticUpdate(): ServedObject | null;
}

const MAX_REQUEST_BYTES = 1024;

export interface LightClientServer {
  /** Publishes the current finality (and optimistic) update on gossip; false when there is none yet. */
  publishFinalityUpdate(): Promise<boolean>;
  publishOptimisticUpdate(): Promise<boolean>;
  /** Every gossip topic the server publishes on for the current fork digest. */
  topics(): string[];
  stop(): Promise<void>;
}

export interface LightClientServerOptions {
  readonly host: ConsensusHost;
  readonly config: BeaconChainConfig;
  readonly schedule: BlobSchedule;
  readonly data: LightClientData;
  /** The slot the wall clock says (picks the gossip topic's digest). */
  readonly currentSlot: () => number;
  readonly onError?: (error: Error) => void;
}

export async function serveLightClientData(options: LightClientServerOptions): Promise<LightClientServer> {
  const { host, config, schedule, data } = options;
  const chunk = (kind: LightClientKind, object: ServedObject): Uint8Array => {
    const fork = forkAtEpoch(config, epochAtSlot(config, object.slot)).name;
    return encodeSuccessChunk(digestAtSlot(config, schedule, object.slot), jsonToSsz(config, fork, kind, object.data));
  };

  async function respond(protocol: string, answer: (request: Uint8Array) => Uint8Array, stream: { source: AsyncIterable<{ subarray(): Uint8Array } | Uint8Array>; sink(source: Iterable<Uint8Array>): Promise<void>; abort(error: Error): void }): Promise<void> {
    let response: Uint8Array;
    try {
      const request = await readAll(stream.source, MAX_REQUEST_BYTES);
      try {
        response = answer(request);
      } catch (error) {
        response = encodeErrorChunk(RESULT.serverError, (error as Error).message);
        options.onError?.(new Error(`${protocol}: ${(error as Error).message}`));
      }
    } catch (error) {
      response = encodeErrorChunk(RESULT.invalidRequest, (error as Error).message);
    }
    try {
      await stream.sink([response]);
    } catch (error) {
      stream.abort(error as Error);
    }
  }

  const unavailable = (what: string) => encodeErrorChunk(RESULT.resourceUnavailable, what);
  const handlers: Array<[string, (request: Uint8Array) => Uint8Array]> = [
    [LIGHT_CLIENT_PROTOCOLS.bootstrap, (request) => {
      const root = decodeRequest(request, 32, 32);
      const object = data.bootstrap(root);
      return object ? chunk('bootstrap', object) : unavailable(`no bootstrap for block root 0x${Buffer.from(root).toString('hex')}`);
    }],
    [LIGHT_CLIENT_PROTOCOLS.updatesByRange, (request) => {
      const { startPeriod, count } = UpdatesByRangeRequest.deserialize(decodeRequest(request, 16, 16));
      const updates = data.updates(startPeriod, Math.min(count, MAX_REQUEST_LIGHT_CLIENT_UPDATES));
      return concat(updates.map((update) => chunk('update', update)));
    }],
    [LIGHT_CLIENT_PROTOCOLS.finalityUpdate, (request) => {
      if (request.length !== 0) throw new Error('a finality update request has no content');
      const object = data.finalityUpdate();
      return object ? chunk('finality_update', object) : unavailable('no finality update yet');
    }],
    [LIGHT_CLIENT_PROTOCOLS.optimisticUpdate, (request) => {
      if (request.length !== 0) throw new Error('an optimistic update request has no content');
      const object = data.optimisticUpdate();
      return object ? chunk('optimistic_update', object) : unavailable('no optimistic update yet');
    }],
  ];
  for (const [protocol, answer] of handlers) {
    await host.handle(protocol, ({ stream }) => void respond(protocol, answer, stream as never), { maxInboundStreams: 32 });
  }

  const topicOf = (name: string) => gossipTopic(digestAtSlot(config, schedule, options.currentSlot()), name);
  async function publish(name: string, kind: LightClientKind, object: ServedObject | null): Promise<boolean> {
    if (!object) return false;
    const fork = forkAtEpoch(config, epochAtSlot(config, object.slot)).name;
    await host.services.pubsub.publish(topicOf(name), jsonToSsz(config, fork, kind, object.data));
    return true;
  }
  return {
    publishFinalityUpdate: () => publish('light_client_finality_update', 'finality_update', data.finalityUpdate()),
    publishOptimisticUpdate: () => publish('light_client_optimistic_update', 'optimistic_update', data.optimisticUpdate()),
    topics: () => [topicOf('light_client_finality_update'), topicOf('light_client_optimistic_update')],
    async stop() {
      for (const [protocol] of handlers) await host.unhandle(protocol);
    },
  };
}
