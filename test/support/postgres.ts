/** A throwaway PostgreSQL cluster for the sink tests; the bench harness owns the one implementation. */
export { postgresBinDir, startPostgres, type PostgresServer, type StartPostgresOptions } from '../../bench/postgres.js';
