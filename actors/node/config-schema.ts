/**
 * The one schema of the TOML configuration: it validates the file and produces the TypeScript
 * types every lane uses. Every key here is documented, with its default, in config.example.toml.
 */
import { z } from 'zod';
import { skippedHistorySources } from './history-sources.js';
import { jetstreamConfig } from './jetstream-config.js';
import { kindOptionsText, processorConfig, type ProcessorEntry } from './processor-config.js';

const HOST_PORT = /^(?<host>\[[0-9a-fA-F:]+\]|[A-Za-z0-9.-]+):(?<port>\d{1,5})$/;

/** `host:port` with a port in 0–65535 (0 picks a free port). */
export const listenAddress = z.string().refine((value) => {
  const port = Number(HOST_PORT.exec(value)?.groups?.port ?? NaN);
  return port >= 0 && port <= 65535;
}, 'expected host:port with a port between 0 and 65535, e.g. 127.0.0.1:8080');

export const positiveInt = z.number().int().positive();

/** The budget and supervision policy of one lane. */
const actorBudget = (defaults: { mailbox_capacity: number; memory_mb: number; instances?: number }) =>
  z.strictObject({
    /** Worker threads running this lane (listeners may run several on one port). */
    instances: positiveInt.max(64).default(defaults.instances ?? 1),
    mailbox_capacity: positiveInt.max(1_000_000).default(defaults.mailbox_capacity),
    memory_mb: z.number().int().min(16).max(65_536).default(defaults.memory_mb),
    restart_intensity: z.number().int().min(0).max(1000).default(5),
    restart_period_seconds: positiveInt.max(86_400).default(60),
    backoff_initial_ms: positiveInt.max(600_000).default(200),
    backoff_max_ms: positiveInt.max(3_600_000).default(30_000),
    backoff_jitter: z.number().min(0).max(1).default(0.2),
  }).prefault({});

/** One `[[sources.history]]` entry (actors/history; net/history; net/era). */
const historySourceConfig = z.strictObject({
  /** Name in URLs (`/admin/v1/sources/{id}/probe`) and in job records. */
  id: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._~-]{0,63}$/, 'expected a URL-safe name of 1-64 characters'),
  /**
   * rpc: an upstream archive JSON-RPC node (blocks and receipts by number); devnet: the embedded devnet's chain
   * (skipped, with a warning, unless sources.live.kind = "devnet"); p2p: the devp2p peers of sources.live.kind = "p2p"
   * (their own request budget beside the live head's; headers, bodies and receipts by number, verified like live
   * material); era: mainnet's pre-merge history from Era1 files (a directory, `path`, or an HTTP archive, `url`), each
   * file checked against the epoch roots the node ships.
   */
  kind: z.enum(['rpc', 'devnet', 'p2p', 'era']),
  /** Requests (rpc), block reads (devnet), ranges asked of the peers (p2p) or file reads, verifications and downloads (era) in flight at once for this source. */
  source_concurrency: positiveInt.max(256).default(4),
  /** kind = rpc: the upstream endpoint (http or https); kind = era: the base URL of an Era1 archive (its index page and checksums.txt), or "" with path. */
  url: z.string().default(''),
  /** kind = era: a directory of Era1 files (mainnet-NNNNN-xxxxxxxx.era1), relative to the config file's folder; or "" with url. */
  path: z.string().default(''),
  /** kind = era with url: where downloaded files are kept ("": <data_dir>/era1-cache/<id>), relative to the config file's folder. */
  cache_dir: z.string().default(''),
  /** kind = era with url: downloaded files kept in cache_dir (the least recently used are deleted past it). */
  cache_files: positiveInt.max(10_000).default(2),
  /** kind = rpc: blocks per JSON-RPC batch (each block is two calls: the block with transactions and its receipts). */
  batch_blocks: positiveInt.max(1000).default(16),
  /** kind = rpc: one request's budget; kind = era with url: a listing request, or a download with no byte arriving, fails after this long. */
  request_timeout_ms: positiveInt.max(600_000).default(10_000),
  max_retries: z.number().int().min(0).max(100).default(3),
  backoff_initial_ms: positiveInt.max(600_000).default(200),
  backoff_max_ms: positiveInt.max(3_600_000).default(10_000),
  /** kind = rpc, dev chains only: accept anvil's non-canonical blob transactions root (as sources.live.pooled_blob_roots). */
  pooled_blob_roots: z.boolean().default(false),
  /**
   * kind = rpc: how blocks are asked for. raw: `debug_getRawBlock` + `debug_getRawReceipts` (the block's RLP and its
   * receipts' consensus encodings: fewer bytes and no per-field conversion); json: `eth_getBlockByNumber(n, true)` +
   * `eth_getBlockReceipts`; auto: raw when the upstream answers the raw methods, else json.
   */
  encoding: z.enum(['auto', 'raw', 'json']).default('auto'),
}).superRefine((source, ctx) => {
  if (source.kind === 'rpc' && !/^https?:\/\/\S+$/.test(source.url)) ctx.addIssue({ code: 'custom', path: ['url'], message: 'expected the http(s) URL of the upstream archive node for kind = "rpc"' });
  if ((source.kind === 'devnet' || source.kind === 'p2p') && source.url !== '') ctx.addIssue({ code: 'custom', path: ['url'], message: `expected no url for kind = "${source.kind}"` });
  if (source.kind !== 'era') {
    for (const key of ['path', 'cache_dir'] as const) {
      if (source[key] !== '') ctx.addIssue({ code: 'custom', path: [key], message: `expected no ${key} for kind = "${source.kind}" (it is a key of kind = "era")` });
    }
    return;
  }
  if (source.path === '' && source.url === '') {
    ctx.addIssue({ code: 'custom', path: ['path'], message: 'expected a directory of Era1 files (path), or the http(s) base URL of an Era1 archive (url), for kind = "era"' });
  } else if (source.path !== '' && source.url !== '') {
    ctx.addIssue({ code: 'custom', path: ['url'], message: 'expected either path (a directory) or url (an HTTP archive) for kind = "era", not both' });
  } else if (source.url !== '' && !/^https?:\/\/\S+$/.test(source.url)) {
    ctx.addIssue({ code: 'custom', path: ['url'], message: 'expected the http(s) base URL of an Era1 archive (serving its file list and checksums.txt) for kind = "era"' });
  }
  if (source.path !== '' && source.cache_dir !== '') ctx.addIssue({ code: 'custom', path: ['cache_dir'], message: 'expected no cache_dir with path: a directory\'s Era1 files are read where they are' });
});

/** Sections a relay's configuration shares with the node's (actors/relay/config.ts). */
export const authSection = z.strictObject({
  token_file: z.string().default(''),
});

export const logSection = z.strictObject({
  level: z.enum(['debug', 'info', 'warn', 'error', 'silent']).default('info'),
  max_lines_per_second: positiveInt.max(100_000).default(200),
});

export const limitsSection = z.strictObject({
  max_request_body_bytes: positiveInt.max(256 * 1024 * 1024).default(1024 * 1024),
  max_url_bytes: positiveInt.max(65_536).default(8192),
  default_page_limit: positiveInt.max(100_000).default(100),
  max_page_limit: positiveInt.max(100_000).default(1000),
  max_block_range: positiveInt.max(10_000_000).default(10_000),
});

export const sseSection = z.strictObject({
  heartbeat_seconds: positiveInt.max(3600).default(15),
  /** Bytes a connection may have queued before it is closed as too slow. */
  max_buffered_bytes: positiveInt.max(1024 * 1024 * 1024).default(4 * 1024 * 1024),
  /** Changes read from the log per write burst. */
  batch_changes: positiveInt.max(100_000).default(512),
});

export const configSchema = z.strictObject({
  data_dir: z.string().min(1).default('./data'),
  listeners: z.strictObject({
    api: listenAddress.default('127.0.0.1:8080'),
    rpc_http: listenAddress.default('127.0.0.1:8545'),
    rpc_ws: listenAddress.default('127.0.0.1:8546'),
  }).prefault({}),
  auth: authSection.prefault({}),
  log: logSection.prefault({}),
  runtime: z.strictObject({
    pool_threads: positiveInt.max(256).default(2),
    shutdown_timeout_seconds: positiveInt.max(600).default(10),
    /** Start watchdog: a worker not ready this long after its lane started is reported; a required lane's stops the node (exit 1). */
    start_timeout_seconds: positiveInt.max(86_400).default(600),
    message_batching: z.boolean().default(true),
  }).prefault({}),
  limits: limitsSection.prefault({}),
  sse: sseSection.prefault({}),
  rpc: z.strictObject({
    /** Largest JSON-RPC request body (HTTP) or frame (WebSocket). */
    max_request_body_bytes: positiveInt.max(256 * 1024 * 1024).default(5 * 1024 * 1024),
    /** Requests in one JSON-RPC batch. */
    max_batch_requests: positiveInt.max(100_000).default(1000),
    /** Blocks one eth_getLogs call may scan. */
    max_logs_block_range: positiveInt.max(10_000_000).default(10_000),
    /** Logs one eth_getLogs call may return. */
    max_logs_results: positiveInt.max(10_000_000).default(10_000),
    /** Bytes queued for one WebSocket client before it is closed with 1013. */
    ws_max_buffered_bytes: positiveInt.max(1024 * 1024 * 1024).default(4 * 1024 * 1024),
    /** Subscriptions one WebSocket connection may hold. */
    max_subscriptions_per_connection: positiveInt.max(100_000).default(1000),
    /** Decoded blocks (with their rendered JSON) each rpc worker keeps. */
    block_cache_entries: positiveInt.max(1_000_000).default(256),
    /** Estimated heap those blocks may hold in each rpc worker (8 bytes per stored byte: decoded receipts, rendered logs). */
    block_cache_bytes: positiveInt.max(64 * 1024 * 1024 * 1024).default(128 * 1024 * 1024),
  }).prefault({}),
  snapshots: z.strictObject({
    /** How long query-and-follow pages stay stable (spec §8), across restarts. */
    ttl_seconds: positiveInt.max(7 * 86_400).default(600),
    /** A snapshot over this many rows or bytes answers 413 query_too_expensive. */
    max_rows: positiveInt.max(100_000_000).default(250_000),
    max_bytes: positiveInt.max(64 * 1024 ** 3).default(512 * 1024 * 1024),
    /** Open snapshots at once; one more answers 429 until one is released or expires. */
    max_active: positiveInt.max(100_000).default(32),
    sweep_interval_seconds: positiveInt.max(86_400).default(30),
    /** How long an expired or released snapshot is remembered (its pages answer cursor_expired, not cursor_invalid). */
    tombstone_seconds: positiveInt.max(30 * 86_400).default(86_400),
  }).prefault({}),
  sources: z.strictObject({
    live: z.strictObject({
      /** none: no live source; the node serves what its store holds (a chain loaded with `chain-node import`). p2p: devp2p peers (RLPx, eth/69 + eth/68). */
      kind: z.enum(['devnet', 'rpc', 'none', 'p2p']).default('devnet'),
      /** Upstream JSON-RPC endpoint (kind = rpc). */
      url: z.string().default(''),
      /** Optional upstream WebSocket for newHeads (kind = rpc); empty: poll only. */
      ws_url: z.string().default(''),
      /** geth genesis.json of the chain (fork schedule, blob schedule): the upstream's (not needed for mainnet), or the imported chain's (kind = none; also the default of `chain-node import --genesis`). */
      genesis_file: z.string().default(''),
      poll_interval_ms: positiveInt.max(600_000).default(1000),
      request_timeout_ms: positiveInt.max(600_000).default(10_000),
      max_retries: z.number().int().min(0).max(100).default(3),
      backoff_initial_ms: positiveInt.max(600_000).default(200),
      backoff_max_ms: positiveInt.max(3_600_000).default(10_000),
      /** Dev chains only: accept anvil's non-canonical transactions root of blocks with blob transactions (anvil ≤ 1.7.1). */
      pooled_blob_roots: z.boolean().default(false),
      /** kind = p2p: peers dialled and re-dialled (enode URLs); supplements discovery, never an allowlist. */
      trusted_peers: z.array(z.string().regex(/^enode:\/\/[0-9a-fA-F]{128}@[^\s]+:\d{1,5}$/, 'expected enode://<128 hex digits>@<host>:<port>')).default([]),
      /** kind = p2p: EIP-1459 node lists (`enrtree://<key>@<domain>`); each root is re-resolved every 15 s. */
      dns_trees: z.array(z.string()).default([]),
      /** kind = p2p: the DNS server asked for the trees (host:port); empty: the system's resolver. */
      dns_server: z.string().default(''),
      /** kind = p2p: inbound RLPx TCP port on 127.0.0.1 (0: no inbound listener). */
      listener_port: z.number().int().min(0).max(65535).default(0),
      /** kind = p2p: discv4 UDP port on 127.0.0.1 (0: discv4 off); peers found are dialled, origin discv4_or_5. */
      discovery_port: z.number().int().min(0).max(65535).default(0),
      /** kind = p2p: discv4 bootnodes (`enode://<id>@<host>:<tcp>[?discport=<udp>]`), pinged and asked for neighbours. */
      discv4_bootnodes: z.array(z.string()).default([]),
      /** kind = p2p: discv5 UDP port on 127.0.0.1 (0: any free port). */
      discv5_port: z.number().int().min(0).max(65535).default(0),
      /** kind = p2p: discv5 discovery (peers found are dialled, origin discv4_or_5). */
      enable_discv5: z.boolean().default(false),
      /** kind = p2p: discv5 bootnode records (`enr:…`). */
      discv5_bootnodes: z.array(z.string()).default([]),
      /**
       * kind = p2p: the address announced to peers and how it is learned, geth's `--nat` forms: "none", "extip:<IPv4>",
       * "upnp", "upnp:<rootDesc URL>", "pmp", "pmp:<gateway IPv4>", "any" (checked in actors/peers/config-checks.ts).
       */
      nat: z.string().default('none'),
      /** kind = p2p, nat = upnp/pmp/any: the lease asked for each port mapping, renewed at half of it (geth: 20 minutes). */
      nat_lease_seconds: positiveInt.min(2).max(86_400).default(1200),
      /** kind = p2p: material requests in flight at once (also at most 4 per peer). */
      material_request_concurrency: positiveInt.max(1024).default(32),
      /** kind = p2p: blocks per body/receipt request window (halved after partial or failed answers, regrown after 8 good windows). */
      material_request_blocks: positiveInt.max(1024).default(8),
      /** kind = p2p: connected qualified sessions needed before material requests start. */
      minimum_peers: positiveInt.max(1000).default(1),
      /** kind = p2p: zero peers this long rebuilds the whole network manager. */
      peer_recovery_timeout_seconds: positiveInt.max(86_400).default(300),
      /** kind = p2p: cap of the peer store (<data_dir>/p2p-peers.json, kept across restarts) and of the discovered candidates. */
      peer_store_max_entries: positiveInt.max(10_000_000).default(10_000),
      /**
       * kind = p2p: where a fresh store's chain begins: "genesis" (synced from block 0) or "finalized" (the finality
       * backend's first finalized block, fetched by its hash and verified; history below it comes from [[sources.history]]).
       */
      start: z.enum(['genesis', 'finalized']).default('genesis'),
      /** kind = p2p: RLPx sessions held at once. */
      max_peers: positiveInt.max(1000).default(25),
      /** kind = p2p: how long a peer that served cryptographically invalid material is banned. */
      peer_ban_seconds: positiveInt.max(30 * 86_400).default(900),
    }).prefault({}),
    /** History sources (`[[sources.history]]`): where materialization jobs and source probes fetch blocks below the live lane. */
    history: z.array(historySourceConfig).default([])
      .refine((list) => new Set(list.map((source) => source.id)).size === list.length, 'expected unique history source ids'),
  }).prefault({}),
  finality: z.strictObject({
    /**
     * devnet: the devnet's own finality; rpc: the upstream's `finalized` block tag; none: the finalized block the store records (an import's);
     * beacon_api: Beacon API endpoints (agreement, or light-client proof with checkpoint_root); consensus_p2p: a light client over the consensus
     * layer's libp2p network (discv5 peers by their `eth2` record entry, light-client Req/Resp and gossip) from checkpoint_root at checkpoint_slot.
     */
    kind: z.enum(['devnet', 'rpc', 'none', 'beacon_api', 'consensus_p2p']).default('devnet'),
    poll_interval_ms: positiveInt.max(600_000).default(2000),
    /** Beacon API endpoints (kind = beacon_api). */
    urls: z.array(z.string().regex(/^https?:\/\/\S+$/, 'expected an http(s) URL')).max(16).default([]),
    /** Endpoints that must report the same finalized checkpoint (kind = beacon_api without checkpoint_root). */
    minimum_agreement: positiveInt.max(16).default(1),
    /** Weak-subjectivity checkpoint block root: the light client bootstraps from it and verifies every update; empty: agreement only. */
    checkpoint_root: z.string().regex(/^(0x[0-9a-fA-F]{64})?$/, 'expected a 32-byte block root as 0x-hex, or empty').default(''),
    request_timeout_ms: positiveInt.max(600_000).default(10_000),
    max_retries: z.number().int().min(0).max(100).default(3),
    backoff_initial_ms: positiveInt.max(600_000).default(200),
    backoff_max_ms: positiveInt.max(3_600_000).default(10_000),
    /** kind = beacon_api: also subscribe to each endpoint's `/eth/v1/events` stream (finalized_checkpoint; light_client_finality_update with checkpoint_root) and read finality at once on an event; polling stays the fallback. */
    event_stream: z.boolean().default(true),
    /** kind = consensus_p2p: the finalized slot of checkpoint_root (the bootstrap must be at it; its fork picks the SSZ shapes); unset by default. */
    checkpoint_slot: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).optional(),
    /** kind = consensus_p2p: discv5 bootnode records (`enr:…`); empty: the embedded mainnet bootnodes (on the devnet: its own consensus peer, devnet.beacon_p2p). */
    bootnodes: z.array(z.string().regex(/^enr:[A-Za-z0-9_-]+$/, 'expected a node record "enr:<base64url>"')).max(64).default([]),
    /** kind = consensus_p2p: the address discv5 (UDP) and libp2p (TCP) bind; loopback by default (0.0.0.0 to reach public peers). */
    p2p_host: z.string().regex(/^\d{1,3}(\.\d{1,3}){3}$/, 'expected an IPv4 address').default('127.0.0.1'),
    /** kind = consensus_p2p: discv5's UDP port; 0 picks a free one. */
    discovery_port: z.number().int().min(0).max(65535).default(9000),
    /** kind = consensus_p2p: libp2p's TCP port; 0 picks a free one. */
    p2p_port: z.number().int().min(0).max(65535).default(9000),
    /** kind = consensus_p2p: consensus peers connected at once. */
    max_peers: positiveInt.max(100).default(8),
  }).superRefine((finality, issues) => {
    if (finality.kind === 'consensus_p2p') {
      const missing = [finality.checkpoint_root === '' ? 'finality.checkpoint_root' : null, finality.checkpoint_slot === undefined ? 'finality.checkpoint_slot' : null].filter((key) => key !== null);
      if (missing.length > 0) {
        issues.addIssue({
          code: 'custom', path: [finality.checkpoint_root === '' ? 'checkpoint_root' : 'checkpoint_slot'],
          message: `kind = "consensus_p2p" needs a weak-subjectivity checkpoint: finality.checkpoint_root (a finalized block root, 0x + 64 hex) and finality.checkpoint_slot (its slot); missing: ${missing.join(' and ')}`,
        });
      }
      return;
    }
    if (finality.kind !== 'beacon_api') return;
    if (finality.urls.length === 0) issues.addIssue({ code: 'custom', path: ['urls'], message: 'at least one Beacon API URL when finality.kind = "beacon_api"' });
    if (finality.minimum_agreement > Math.max(1, finality.urls.length)) {
      issues.addIssue({ code: 'custom', path: ['minimum_agreement'], message: `at most the number of finality.urls (${finality.urls.length})` });
    }
    if (new Set(finality.urls).size !== finality.urls.length) issues.addIssue({ code: 'custom', path: ['urls'], message: 'distinct URLs (agreement counts independent endpoints)' });
  }).prefault({}),
  history: z.strictObject({
    /** Blocks per materialization-job chunk: fetched, verified and committed together (memory is bounded by it, never by the job's range). */
    chunk_blocks: positiveInt.max(100_000).default(256),
    /** On-demand JSON-RPC history (spec §4.7): blocks below the recorded chain are fetched, verified and recorded when a JSON-RPC request names them (needs a [[sources.history]]). */
    on_demand: z.boolean().default(true),
    /** The history source on-demand requests use; empty: the first [[sources.history]] the node uses (a skipped one may not be named). */
    on_demand_source: z.string().default(''),
    /** One on-demand request's budget (spec §8: one minute); past it the request answers source_unavailable. */
    on_demand_timeout_seconds: positiveInt.max(3600).default(60),
    /** Blocks one JSON-RPC request may fetch on demand (the on-demand eth_getLogs range maximum); more answers query_too_expensive. */
    on_demand_max_blocks: positiveInt.max(100_000).default(1000),
    /** On-demand requests one rpc worker waits on at once; more answer query_too_expensive (retryable). */
    on_demand_max_pending: positiveInt.max(100_000).default(64),
  }).prefault({}),
  retention: z.strictObject({
    /** How often the outbox trims each change log to its `retain_changes` window. */
    prune_interval_seconds: positiveInt.max(86_400).default(10),
  }).prefault({}),
  /**
   * Byte budgets the alert rules measure against (spec §8: pending-delta or outbox bytes over 80 % of budget).
   * Nothing is evicted to stay under them: rollback data of unfinalized blocks is never dropped, and a change log
   * keeps what `retain_changes` and active leases keep; the budget is what the operator sized data_dir for.
   */
  budgets: z.strictObject({
    /** Inverse writes kept for blocks not yet finalized, across all processor instances (LMDB bytes of their undo tables). */
    pending_deltas: z.strictObject({ max_bytes: positiveInt.default(256 * 1024 * 1024) }).prefault({}),
    /** Change logs retained for delivery (processor instances and backfill-subscription streams; LMDB bytes of their change tables). */
    outbox: z.strictObject({ max_bytes: positiveInt.default(16 * 1024 * 1024 * 1024) }).prefault({}),
    /** `[budgets.artifacts]` (spec §8): across every processor; unlike the two above it is enforced — a block whose artifact would pass it is not committed until room is made. */
    artifacts: z.strictObject({
      /** Retained plus pending artifact bytes. */
      max_bytes: positiveInt.max(Number.MAX_SAFE_INTEGER).default(1024 ** 3),
      /** Pending candidates (artifacts of included blocks waiting for finality). */
      max_pending_blocks: positiveInt.max(100_000_000).default(4096),
    }).prefault({}),
  }).prefault({}),
  /** `[delivery.jetstream]` (issue 30): publication of the change feeds to NATS JetStream (jetstream-config.ts). */
  delivery: z.strictObject({
    jetstream: jetstreamConfig.prefault({}),
  }).prefault({}),
  chain: z.strictObject({
    /** A reorg deeper than this fails closed (publication stops, readiness drops). */
    max_reorg_depth: positiveInt.max(100_000).default(64),
  }).prefault({}),
  devnet: z.strictObject({
    seed: z.string().default('chain-data-node'),
    chain_id: positiveInt.default(1337),
    block_time_ms: positiveInt.max(3_600_000).default(2000),
    transactions_per_block: z.number().int().min(0).max(5000).default(12),
    blob_transactions_per_block: z.number().int().min(0).max(100).default(3),
    max_blobs_per_transaction: positiveInt.max(6).default(6),
    /** Accounts that send the transactions and hold the tokens (more accounts: more distinct balances change a block). */
    accounts: z.number().int().min(2).max(1024).default(16),
    reorg_every: z.number().int().min(0).default(30),
    reorg_depth: positiveInt.default(2),
    finality_lag: positiveInt.default(8),
    /** Fork activations in seconds after genesis: Cancun → Prague → Osaka → BPO1. */
    prague_after_seconds: z.number().int().min(0).default(40),
    osaka_after_seconds: z.number().int().min(0).default(80),
    bpo1_after_seconds: z.number().int().min(0).default(120),
    /** host:port of the devnet's Beacon-API-shaped finality endpoint (light-client objects signed by its own sync committee); empty: not served. */
    beacon_api: z.string().refine((value) => value === '' || listenAddress.safeParse(value).success, 'expected empty or host:port with a port between 0 and 65535, e.g. 127.0.0.1:5052').default(''),
    /** host:port (TCP for libp2p, UDP for discv5) of the devnet's consensus p2p peer serving its light-client data (finality.kind = "consensus_p2p"); empty: not served. */
    beacon_p2p: z.string().refine((value) => value === '' || /^\d{1,3}(\.\d{1,3}){3}:\d{1,5}$/.test(value) && Number(value.split(':')[1]) <= 65535, 'expected empty or IPv4:port, e.g. 127.0.0.1:9100').default(''),
    /** Serve the devnet chain as an RLPx/eth peer on this host:port (a `kind = "p2p"` node can follow it); empty: off. */
    p2p_listen: z.string().refine((value) => {
      if (value === '') return true;
      const port = Number(HOST_PORT.exec(value)?.groups?.port ?? NaN);
      return port >= 0 && port <= 65535;
    }, 'expected "" (off) or host:port, e.g. 127.0.0.1:30303').default(''),
  }).prefault({}),
  processors: z.array(processorConfig).default([{ id: 'blobs', kind: 'blobs', history_mode: 'live_only', history_control: 'node_owned', output: 'entities', delivery: true, retain_changes: 1_000_000, checkpoint_every_blocks: 1000, checkpoints_retained: 3, artifacts: { retention: 'none', window_blocks: 10_000 } }])
    .refine((list) => new Set(list.map((p) => p.id)).size === list.length, 'expected unique processor ids'),
  actors: z.strictObject({
    listener: actorBudget({ mailbox_capacity: 1024, memory_mb: 256 }),
    rpc: actorBudget({ mailbox_capacity: 1024, memory_mb: 512 }),
    source: actorBudget({ mailbox_capacity: 256, memory_mb: 512 }),
    finality: actorBudget({ mailbox_capacity: 64, memory_mb: 128 }),
    chain: actorBudget({ mailbox_capacity: 1024, memory_mb: 256 }),
    processor: actorBudget({ mailbox_capacity: 1024, memory_mb: 512 }),
    /** The one writer of consumer records (leases, watermarks). */
    outbox: actorBudget({ mailbox_capacity: 1024, memory_mb: 128 }),
    snapshots: actorBudget({ mailbox_capacity: 256, memory_mb: 256 }),
    /** JetStream publication (actors/publisher; only with [delivery.jetstream] enabled): one instance; its mailbox takes every processor's change notices. */
    publisher: actorBudget({ mailbox_capacity: 1024, memory_mb: 256 }),
    /** Materialization jobs and source probes (actors/history). */
    history: actorBudget({ mailbox_capacity: 256, memory_mb: 512 }),
  }).prefault({}),
}).superRefine((config, ctx) => {
  config.sources.history.forEach((source, index) => {
    if (source.kind === 'p2p' && config.sources.live.kind !== 'p2p') {
      ctx.addIssue({ code: 'custom', path: ['sources', 'history', index, 'kind'], message: `expected sources.live.kind = "p2p" for a history source of kind "p2p" (it asks the live lane's peers); sources.live.kind is "${config.sources.live.kind}"` });
    }
  });
  if (config.sources.live.start === 'finalized' && (config.sources.live.kind !== 'p2p' || (config.finality.kind !== 'beacon_api' && config.finality.kind !== 'consensus_p2p'))) {
    ctx.addIssue({ code: 'custom', path: ['sources', 'live', 'start'], message: `expected "genesis", or "finalized" with sources.live.kind = "p2p" and finality.kind = "beacon_api" or "consensus_p2p" (a finality backend that proves a block the node has not recorded); sources.live.kind is "${config.sources.live.kind}" and finality.kind "${config.finality.kind}"` });
  }
  if (config.actors.publisher.instances !== 1) ctx.addIssue({ code: 'custom', path: ['actors', 'publisher', 'instances'], message: 'expected 1 (one publisher per store: each instance\'s subject has one writer)' });
  if (config.history.on_demand_source !== '' && !config.sources.history.some((source) => source.id === config.history.on_demand_source)) {
    ctx.addIssue({ code: 'custom', path: ['history', 'on_demand_source'], message: `expected the id of a [[sources.history]] entry (${config.sources.history.map((source) => JSON.stringify(source.id)).join(', ') || 'none is configured'})` });
  }
  // A skipped source (history-sources.ts) only warns, unless on-demand history is told to use it.
  const skipped = skippedHistorySources(config).find((source) => source.id === config.history.on_demand_source);
  if (skipped) {
    ctx.addIssue({ code: 'custom', path: ['history', 'on_demand_source'], message: `expected the id of a [[sources.history]] entry the node uses, or "" for the first one: "${skipped.id}" is skipped (${skipped.reason})` });
  }
  config.processors.forEach((processor, index) => replayTargetIssues(config.processors, processor).forEach(([key, message]) => ctx.addIssue({ code: 'custom', path: ['processors', index, ...key], message })));
});

/** A replay target (`artifacts.replay_from`) names another instance of the same kind and options that retains artifacts. */
function replayTargetIssues(processors: readonly ProcessorEntry[], processor: ProcessorEntry): Array<[string[], string]> {
  const from = processor.artifacts.replay_from;
  if (from === undefined) return [];
  const source = processors.find((p) => p.id === from);
  const key = ['artifacts', 'replay_from'];
  if (!source || source.id === processor.id) return [[key, `expected the id of another [[processors]] entry (${processors.filter((p) => p.id !== processor.id).map((p) => JSON.stringify(p.id)).join(', ') || 'none'})`]];
  if (source.kind !== processor.kind || kindOptionsText(source) !== kindOptionsText(processor)) return [[key, `expected a processor of the same kind and options (the same map/delta contract): "${from}" is kind "${source.kind}" with other options`]];
  if (source.artifacts.retention === 'none') return [[key, `expected a processor that retains artifacts: "${from}" has artifacts.retention = "none"`]];
  if (source.artifacts.replay_from !== undefined) return [[key, `expected a processor that follows the chain: "${from}" is itself a replay target`]];
  if (processor.start_block !== undefined || processor.history_mode !== 'live_only' || processor.seed_savepoint !== undefined) {
    return [[['artifacts', 'replay_from'], 'expected no start_block, seed_savepoint or history_mode = "on_demand" on a replay target (its blocks come only from replayed artifacts)']];
  }
  return [];
}

export type NodeConfig = z.infer<typeof configSchema>;
export type HistorySourceConfig = NodeConfig['sources']['history'][number];
export type ActorBudget = NodeConfig['actors']['listener'];
export type LaneName = keyof NodeConfig['actors'];
export type ProcessorConfig = NodeConfig['processors'][number];
