/**
 * A JSON-RPC block reference (a tag, a 0x quantity or a block hash) → the block's number, for the bench's upstream
 * servers (synthetic-rpc-server.ts, replay-rpc-server.ts): `latest`/`pending` are the head, `safe`/`finalized` the
 * head less the finality lag, `earliest` is 0; null for anything else, a block above the head or an unknown hash.
 */
export function blockNumberOf(ref: unknown, head: number, finalityLag: number, numberOfHash: (hash: string) => number | null): number | null {
  if (ref === 'latest' || ref === 'pending') return head;
  if (ref === 'safe' || ref === 'finalized') return Math.max(0, head - finalityLag);
  if (ref === 'earliest') return 0;
  if (typeof ref !== 'string' || !ref.startsWith('0x')) return null;
  const number = ref.length === 66 ? numberOfHash(ref.toLowerCase()) : Number.parseInt(ref.slice(2), 16);
  return number !== null && Number.isSafeInteger(number) && number <= head ? number : null;
}
