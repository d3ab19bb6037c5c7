import { onchainTable, primaryKey } from "ponder";

export const balance = onchainTable(
  "balance",
  (t) => ({ token: t.hex().notNull(), holder: t.hex().notNull(), amount: t.bigint().notNull() }),
  (table) => ({ pk: primaryKey({ columns: [table.token, table.holder] }) }),
);
