/** What every aggregate route reads from: the listener's read-only store and the node's configuration. */
import type { Store } from '../../store/store.js';
import type { ArtifactOwner } from '../../store/artifacts.js';
import type { ProcessorRegistry } from './configured-processors.js';
import type { PageLimits } from './query-params.js';
import type { BearerCheck } from '../auth/bearer.js';
import type { RpcHistoryCapability, RpcServedLimits } from './rpc-method-capabilities.js';
import type { SnapshotService } from './entities/snapshot-service.js';
import type { KindSurfaces } from './kind-surface.js';

/** What the listener asks of a processor lane. */
export interface CheckpointService {
  restore(processorId: string, checkpoint: string): Promise<unknown>;
}

/** What the listener asks of a processor lane. */
export interface SavepointService {
  create(processorId: string, id: string): Promise<unknown>;
  remove(processorId: string, id: string): Promise<unknown>;
}

type BlockRange = { readonly fromBlock: number; readonly toBlock: number };

/** Asks a processor lane (coded errors answer as they are; a lane that does not answer is `not_ready`). */
export interface ArtifactService {
  replay(processorId: string, request: BlockRange & { readonly limit: number }): Promise<unknown>;
  /** `ownerId` '' with ownerKind `processor`: the instance's own claims. */
  release(processorId: string, request: BlockRange & ArtifactOwner): Promise<unknown>;
  pin(processorId: string, request: BlockRange & { readonly ownerId: string }): Promise<unknown>;
}

export interface AggregateContext {
  readonly store: Store;
  readonly chainId: number;
  /** The network name (as in BlobsBlock.network). */
  readonly network: string;
  readonly processors: ProcessorRegistry;
  readonly limits: PageLimits;
  /** Configured JSON-RPC listener addresses (host:port). */
  readonly rpc: { readonly http: string; readonly webSocket: string; readonly limits?: RpcServedLimits; readonly history?: RpcHistoryCapability };
  /** The API bearer check, or null when no token is configured (routes registered outside api/server.ts apply it themselves). */
  readonly bearer?: BearerCheck | null;
  /** The `snapshots` lane (query-and-follow); absent where no such lane runs. */
  readonly snapshots?: SnapshotService;
  /** The code surfaces of the configured kinds (collections, typed query extensions); absent: none are served. */
  readonly kinds?: KindSurfaces;
  /** Asks a processor lane to restore a checkpoint; absent where no processor lane is reachable. */
  readonly checkpoints?: CheckpointService;
  /** Asks a processor lane to create or delete a savepoint; absent where no processor lane is reachable. */
  readonly savepoints?: SavepointService;
  /** Asks a processor lane to replay, release or pin artifacts; absent where no processor lane is reachable. */
  readonly artifacts?: ArtifactService;
}
