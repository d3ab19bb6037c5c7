// Balances from Transfer logs: the sender loses `value`, the recipient gains it; the zero address
// (mints and burns) is not a holder, as in the node's erc20 kind.
import { ponder } from "ponder:registry";
import { balance } from "ponder:schema";

const ZERO = "0x0000000000000000000000000000000000000000";

ponder.on("Token:Transfer", async ({ event, context }) => {
  const token = event.log.address.toLowerCase() as `0x${string}`;
  const from = event.args.from.toLowerCase() as `0x${string}`;
  const to = event.args.to.toLowerCase() as `0x${string}`;
  const value = event.args.value;
  if (from !== ZERO) {
    await context.db.insert(balance).values({ token, holder: from, amount: -value }).onConflictDoUpdate((row) => ({ amount: row.amount - value }));
  }
  if (to !== ZERO) {
    await context.db.insert(balance).values({ token, holder: to, amount: value }).onConflictDoUpdate((row) => ({ amount: row.amount + value }));
  }
});
