/**
 * Errors raised when a store cannot be opened as asked. Each message names what was found,
 * what was expected and what the operator can do next; the CLI prints the message and exits non-zero.
 */

export class StoreNotFoundError extends Error {
  readonly path: string;
  constructor(path: string) {
    super(`no store at ${path}: start the node once to create it, or point data_dir at an existing data directory`);
    this.name = 'StoreNotFoundError';
    this.path = path;
  }
}

export class StoreSchemaVersionError extends Error {
  readonly path: string;
  readonly found: unknown;
  readonly supported: number;
  constructor(path: string, found: unknown, supported: number) {
    const advice =
      typeof found === 'number' && found > supported
        ? 'it was written by a newer binary: run that binary (or newer), or restore a backup made by this version'
        : 'this binary cannot migrate it: run the binary that wrote it, or move the database aside and let this binary create a new store';
    super(`store at ${path} has schema version ${JSON.stringify(found)}; this binary supports schema version ${supported}; ${advice}`);
    this.name = 'StoreSchemaVersionError';
    this.path = path;
    this.found = found;
    this.supported = supported;
  }
}

export class StoreChainMismatchError extends Error {
  readonly path: string;
  readonly storeChainId: number;
  readonly requestedChainId: number;
  constructor(path: string, storeChainId: number, requestedChainId: number) {
    super(
      `store at ${path} holds chain ${storeChainId} but chain ${requestedChainId} was requested: ` +
        `use a data directory for chain ${requestedChainId}, or fix the configured chain`,
    );
    this.name = 'StoreChainMismatchError';
    this.path = path;
    this.storeChainId = storeChainId;
    this.requestedChainId = requestedChainId;
  }
}

export class StoreCorruptError extends Error {
  readonly path: string;
  constructor(path: string, problem: string) {
    super(`store at ${path} is damaged: ${problem}; run \`db verify\` and restore a verified backup into a new path`);
    this.name = 'StoreCorruptError';
    this.path = path;
  }
}

export class StoreTableMissingError extends Error {
  readonly path: string;
  readonly table: string;
  constructor(path: string, table: string) {
    super(`store at ${path} has no table ${table}, and a read-only open cannot create it`);
    this.name = 'StoreTableMissingError';
    this.path = path;
    this.table = table;
  }
}
