/**
 * Light-client Req/Resp requests to one consensus peer, answered in the Beacon API's JSON shape so the light client
 * (../light-client.ts) reads a peer exactly as it reads a Beacon API endpoint: `peerBeaconClient` maps the three
 * light-client routes onto `light_client_bootstrap`, `light_client_updates_by_range` and
 * `light_client_finality_update`. Each success chunk's context bytes must be a fork digest of the chain; they choose
 * the SSZ shape the bytes are read in. ResourceUnavailable is "this peer does not have it" (null, like a 404).
 */
import type { PeerId } from '@libp2p/interface';
import type { BeaconClient } from '../api-client.js';
import { hexToBytes } from '../../eth/hex.js';
import type { BeaconChainConfig, ForkName } from '../config.js';
import type { ConsensusHost } from './host.js';
import { maxLightClientSize, sszToJson, UpdatesByRangeRequest, type LightClientKind } from './light-client-ssz.js';
import {
  encodePayload, exchange, LIGHT_CLIENT_PROTOCOLS, MAX_REQUEST_LIGHT_CLIENT_UPDATES, ReqRespError, RESULT, type ResponseChunk,
} from './req-resp.js';

export interface PeerRequestOptions {
  readonly host: ConsensusHost;
  readonly peer: PeerId;
  readonly config: BeaconChainConfig;
  /** Fork digest (hex, no 0x) → fork, for every digest of the chain (./fork-digest.ts `digestForks`). */
  readonly digests: ReadonlyMap<string, ForkName>;
  readonly timeoutMs: number;
  /** The checkpoint's finalized slot: a bootstrap for another slot is refused. */
  readonly checkpointSlot: number;
  readonly signal?: AbortSignal;
}

const MAX_RESPONSE_BYTES = 16 * 1024 * 1024;

function request(options: PeerRequestOptions, protocol: string, body: Uint8Array | null, kind: LightClientKind, maxChunks: number): Promise<ResponseChunk[]> {
  return exchange(options.host, options.peer, protocol, body, {
    contextBytes: true, maxSize: maxLightClientSize(options.config, kind), maxChunks, maxBytes: MAX_RESPONSE_BYTES, timeoutMs: options.timeoutMs,
    ...(options.signal ? { signal: options.signal } : {}),
  });
}

function toJson(options: PeerRequestOptions, kind: LightClientKind, chunk: ResponseChunk): { version: string; data: unknown } {
  const digest = Buffer.from(chunk.context!).toString('hex');
  const fork = options.digests.get(digest);
  if (fork === undefined) throw new ReqRespError(`context bytes 0x${digest} are no fork digest of ${options.config.name}`);
  try {
    return sszToJson(options.config, fork, kind, chunk.payload);
  } catch (error) {
    throw new ReqRespError(`a ${kind} that is not valid ${fork} SSZ: ${(error as Error).message}`);
  }
}

function single(options: PeerRequestOptions, kind: LightClientKind, chunks: ResponseChunk[]): { version: string; data: unknown } | null {
  const first = chunks[0];
  if (!first) throw new ReqRespError(`an empty ${kind} response`);
  if (first.result === RESULT.resourceUnavailable) return null;
  if (first.result !== RESULT.success) throw new ReqRespError(`error ${first.result}: ${first.message ?? ''}`);
  return toJson(options, kind, first);
}

export async function requestBootstrap(options: PeerRequestOptions, root: Uint8Array): Promise<{ version: string; data: unknown } | null> {
  const answer = single(options, 'bootstrap', await request(options, LIGHT_CLIENT_PROTOCOLS.bootstrap, encodePayload(root), 'bootstrap', 1));
  const slot = (answer?.data as { header?: { beacon?: { slot?: unknown } } } | undefined)?.header?.beacon?.slot;
  if (answer && slot !== String(options.checkpointSlot)) throw new ReqRespError(`a bootstrap at slot ${String(slot)}, not the checkpoint's finalized slot ${options.checkpointSlot}`);
  return answer;
}

export async function requestUpdates(options: PeerRequestOptions, startPeriod: number, count: number): Promise<Array<{ version: string; data: unknown }>> {
  const wanted = Math.min(count, MAX_REQUEST_LIGHT_CLIENT_UPDATES);
  const chunks = await request(options, LIGHT_CLIENT_PROTOCOLS.updatesByRange, encodePayload(UpdatesByRangeRequest.serialize({ startPeriod, count: wanted })), 'update', wanted);
  const out = [];
  for (const chunk of chunks) {
    if (chunk.result === RESULT.resourceUnavailable) break;
    if (chunk.result !== RESULT.success) throw new ReqRespError(`error ${chunk.result}: ${chunk.message ?? ''}`);
    out.push(toJson(options, 'update', chunk));
  }
  return out;
}

export async function requestFinalityUpdate(options: PeerRequestOptions): Promise<{ version: string; data: unknown } | null> {
  return single(options, 'finality_update', await request(options, LIGHT_CLIENT_PROTOCOLS.finalityUpdate, null, 'finality_update', 1));
}

/** One peer as a BeaconClient for ../light-client.ts: the light-client routes only (others are refused). */
export function peerBeaconClient(options: PeerRequestOptions): BeaconClient {
  const endpoint = `peer ${options.peer.toString()}`;
  return {
    endpoint,
    async get(path: string): Promise<unknown | null> {
      const url = new URL(path, 'p2p://peer');
      const parts = url.pathname.split('/').filter((p) => p !== '');
      const route = parts.slice(0, 5).join('/');
      if (route === 'eth/v1/beacon/light_client/bootstrap' && parts.length === 6) return requestBootstrap(options, hexToBytes(parts[5]!, 32));
      if (route === 'eth/v1/beacon/light_client/updates' && parts.length === 5) {
        const start = Number(url.searchParams.get('start_period'));
        const count = Number(url.searchParams.get('count'));
        if (!Number.isSafeInteger(start) || !Number.isSafeInteger(count) || start < 0 || count < 1) throw new ReqRespError(`a bad updates range in ${path}`);
        return requestUpdates(options, start, count);
      }
      if (route === 'eth/v1/beacon/light_client/finality_update' && parts.length === 5) return requestFinalityUpdate(options);
      throw new ReqRespError(`${path} has no Req/Resp equivalent`);
    },
  };
}
