#!/usr/bin/env node
/**
 * `chain-node`: start the node, check a configuration, import a chain file, export the devnet's genesis.json, and run
 * the store commands.
 * Exit codes: 0 success, 1 failure (bad config, store locked, verification failed), 2 usage error.
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { ConfigError, describeConfig, loadConfig } from './actors/node/config.js';
import { runNode } from './actors/node/main.js';
import { loadRelayConfig } from './actors/relay/config.js';
import { runRelay } from './actors/relay/main.js';
import { resolve } from 'node:path';
import { BackupRefusedError, dbBackup, dbCompact, dbInspect, dbVerify } from './store/commands.js';
import { dbPruneChanges } from './store/prune-command.js';
import { DataDirLockedError } from './store/lock.js';
import { runImport } from './actors/import/import-command.js';
import { ImportError } from './actors/import/errors.js';
import { exportDevnetGenesis, writeGenesisFile } from './actors/node/devnet-genesis-command.js';

const USAGE = `chain-node — a self-hosted Ethereum data node

Usage:
  chain-node start --config FILE [--set dotted.key=value ...]
      Run the node. Each --set overrides one config key, parsed by that key's type
      (e.g. --set listeners.api=127.0.0.1:18080 --set data_dir=/tmp/x).
  chain-node relay --config FILE [--set dotted.key=value ...]
      Run a relay: a stateless process (no store, no chain) that serves a node's delivery routes
      (changes, change head, SSE streams, durable consumers) from the NATS JetStream stream the
      node publishes to ([delivery.jetstream]); many relays behind a load balancer share one feed.
      See README "Scaling out" and examples/scale-out/relay.toml.
  chain-node sink postgres --config FILE [--set dotted.key=value ...]
      Run the PostgreSQL sink: a separate process, a client of the node's aggregate API (or of a relay
      for the change feed), that lands each configured processor's collections in PostgreSQL exactly
      once — bootstrapped from query-and-follow snapshots, then followed through a durable consumer,
      each batch of changes applied in one transaction with the cursor. Connection settings from
      postgres.url or the PG* environment variables; the password from PGPASSWORD or ~/.pgpass.
      See README "A PostgreSQL sink" and examples/postgres-sink/.
  chain-node config check --config FILE [--set dotted.key=value ...]
      Validate the configuration and print the effective config as JSON (secrets masked).
  chain-node import FILE --config FILE [--genesis FILE] [--receipts FILE] [--no-finalize] [--set ...]
      Import a chain file (concatenated RLP blocks, the chain.rlp format) into the configured
      data directory: every block verified and linked, then appended to the chain journal so a
      later start serves it (with sources.live.kind = "none", or extending it from an upstream).
      --genesis: the chain's geth genesis.json (default: sources.live.genesis_file).
      --receipts: JSON of eth_getBlockReceipts results keyed by block hash or number (or an array
      of them), checked against each header's receiptsRoot; blocks with transactions and no
      receipts are recorded as receipts unavailable. The last block is finalized unless
      --no-finalize. A re-run skips blocks already imported; a bad block stops the import
      before anything is written, naming the block and the check that failed.
  chain-node devnet genesis --config FILE [--set ...] [--out FILE]
      Write the chain [devnet] describes as a geth genesis.json (chain id, every fork's block or
      time, blobSchedule, the genesis header fields and alloc) to FILE, or to stdout without --out;
      with --out, print the chain id, genesis hash and fork times. A node that follows this devnet
      node over JSON-RPC (sources.live.kind = "rpc") names the file as sources.live.genesis_file.
  chain-node db inspect --data-dir DIR
      Print the store epoch, schema version, chain id and every table with entries and size.
  chain-node db verify --data-dir DIR
      Check the store's invariants; exit 1 when any check fails.
  chain-node db compact --data-dir DIR
      Copy the store compacted and swap it in safely.
  chain-node db backup PATH --config FILE [--set ...]   (or --data-dir DIR)
      Write a verified, compacted, store-only copy of the data directory's database to PATH
      (a new or empty directory, laid out as a data directory: PATH/db/data.mdb). The copy gets a
      new store epoch; refused before writing when tiered artifact segments exist.
  chain-node db prune-changes --data-dir DIR [--keep N]
      Prune each change log to its newest N changes (default 0), never below what a required
      consumer with an active lease has not acknowledged.
  chain-node help

The db and import commands take the data-directory write lock and refuse while a node holds it.
`;

class UsageError extends Error {}

function parse(args: string[], options: NonNullable<ParseArgsConfig['options']>): Record<string, unknown> {
  try {
    const parsed = parseArgs({ args, options, strict: true, allowPositionals: false });
    return parsed.values as Record<string, unknown>;
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

const CONFIG_OPTIONS = { config: { type: 'string' }, set: { type: 'string', multiple: true } } as const;
const DB_OPTIONS = { 'data-dir': { type: 'string' } } as const;
const DEVNET_GENESIS_OPTIONS = { ...CONFIG_OPTIONS, out: { type: 'string' } } as const;
const IMPORT_OPTIONS = { ...CONFIG_OPTIONS, genesis: { type: 'string' }, receipts: { type: 'string' }, 'no-finalize': { type: 'boolean' } } as const;

function parseWithPositionals(args: string[], options: NonNullable<ParseArgsConfig['options']>): { values: Record<string, unknown>; positionals: string[] } {
  try {
    const parsed = parseArgs({ args, options, strict: true, allowPositionals: true });
    return { values: parsed.values as Record<string, unknown>, positionals: parsed.positionals };
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

function requireString(values: Record<string, unknown>, name: string): string {
  const value = values[name];
  if (typeof value !== 'string' || value === '') throw new UsageError(`--${name} is required`);
  return value;
}

function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, (_key, v: unknown) => (typeof v === 'bigint' ? v.toString() : v), 2)}\n`);
}

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case undefined:
    case 'help':
    case '--help':
    case '-h':
      process.stdout.write(USAGE);
      return command === undefined ? 2 : 0;
    case 'start': {
      const values = parse(rest, CONFIG_OPTIONS);
      await runNode(loadConfig(requireString(values, 'config'), (values.set as string[] | undefined) ?? []));
      return -1;
    }
    case 'relay': {
      const values = parse(rest, CONFIG_OPTIONS);
      await runRelay(loadRelayConfig(requireString(values, 'config'), (values.set as string[] | undefined) ?? []));
      return -1;
    }
    case 'sink': {
      const [sub, ...flags] = rest;
      if (sub !== 'postgres') throw new UsageError(`unknown sink '${sub ?? ''}' (the sink is: postgres)`);
      const values = parse(flags, CONFIG_OPTIONS);
      // Loaded on demand: the PostgreSQL driver is not needed by the node's own commands.
      const { loadSinkConfig } = await import('./actors/sink/config.js');
      const { runSink } = await import('./actors/sink/main.js');
      await runSink(loadSinkConfig(requireString(values, 'config'), (values.set as string[] | undefined) ?? []));
      return -1;
    }
    case 'config': {
      const [sub, ...flags] = rest;
      if (sub !== 'check') throw new UsageError(`unknown config command '${sub ?? ''}'`);
      const values = parse(flags, CONFIG_OPTIONS);
      printJson(describeConfig(loadConfig(requireString(values, 'config'), (values.set as string[] | undefined) ?? [])));
      return 0;
    }
    case 'import': {
      const parsed = parseWithPositionals(rest, IMPORT_OPTIONS);
      if (parsed.positionals.length !== 1) throw new UsageError('import takes exactly one chain file');
      const values = parsed.values;
      const loaded = loadConfig(requireString(values, 'config'), (values.set as string[] | undefined) ?? []);
      printJson(await runImport(loaded, {
        chainFile: parsed.positionals[0]!,
        genesisFile: typeof values.genesis === 'string' ? values.genesis : null,
        receiptsFile: typeof values.receipts === 'string' ? values.receipts : null,
        finalize: values['no-finalize'] !== true,
        progress: (line) => process.stderr.write(`${line}\n`),
      }));
      return 0;
    }
    case 'devnet': {
      const [sub, ...flags] = rest;
      if (sub !== 'genesis') throw new UsageError(`unknown devnet command '${sub ?? ''}'`);
      const values = parse(flags, DEVNET_GENESIS_OPTIONS);
      const exported = exportDevnetGenesis(loadConfig(requireString(values, 'config'), (values.set as string[] | undefined) ?? []));
      if (values.out === undefined) {
        process.stdout.write(exported.text);
        return 0;
      }
      printJson({ out: writeGenesisFile(requireString(values, 'out'), exported.text), ...exported.summary });
      return 0;
    }
    case 'db': {
      const [sub, ...flags] = rest;
      if (sub === 'prune-changes') {
        const values = parse(flags, { ...DB_OPTIONS, keep: { type: 'string' } });
        const keep = values.keep === undefined ? 0 : Number(values.keep);
        if (!/^\d+$/.test(String(values.keep ?? '0'))) throw new UsageError('--keep must be a non-negative integer');
        printJson(await dbPruneChanges(requireString(values, 'data-dir'), keep));
        return 0;
      }
      if (sub === 'backup') {
        const parsed = parseWithPositionals(flags, { ...CONFIG_OPTIONS, ...DB_OPTIONS });
        if (parsed.positionals.length !== 1) throw new UsageError('db backup takes exactly one backup path');
        const values = parsed.values;
        if ((values.config === undefined) === (values['data-dir'] === undefined)) throw new UsageError('db backup needs --config FILE (or --data-dir DIR)');
        const dataDir = typeof values['data-dir'] === 'string' ? values['data-dir'] : loadConfig(requireString(values, 'config'), (values.set as string[] | undefined) ?? []).dataDir;
        printJson(await dbBackup(resolve(dataDir), resolve(parsed.positionals[0]!)));
        return 0;
      }
      const run = { inspect: dbInspect, verify: dbVerify, compact: dbCompact }[sub ?? ''];
      if (!run) throw new UsageError(`unknown db command '${sub ?? ''}'`);
      const values = parse(flags, DB_OPTIONS);
      const result = await run(requireString(values, 'data-dir'));
      printJson(result);
      return 'ok' in result && result.ok === false ? 1 : 0;
    }
    default:
      throw new UsageError(`unknown command '${command}'`);
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exitCode = code;
  },
  (error: unknown) => {
    if (error instanceof UsageError) {
      process.stderr.write(`chain-node: ${error.message}\n\n${USAGE}`);
      process.exitCode = 2;
    } else if (error instanceof ConfigError) {
      process.stderr.write(`chain-node: invalid configuration\n${error.message}\n`);
      process.exitCode = 1;
    } else if (error instanceof ImportError) {
      process.stderr.write(`chain-node: import refused: ${error.message}\n`);
      process.exitCode = 1;
    } else if (error instanceof BackupRefusedError) {
      process.stderr.write(`chain-node: backup refused: ${error.message}\n`);
      process.exitCode = 1;
    } else if (error instanceof DataDirLockedError) {
      process.stderr.write(`chain-node: ${error.message}\n`);
      process.exitCode = 1;
    } else {
      process.stderr.write(`chain-node: ${(error as Error).message ?? String(error)}\n`);
      process.exitCode = 1;
    }
  },
);
