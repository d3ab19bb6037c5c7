// Ponder indexing ERC-20 Transfer logs from a chain-data-node's JSON-RPC. The test sets every value
// through the environment: CDN_PONDER_RPC (the node's rpc_http URL), CDN_PONDER_CHAIN_ID,
// CDN_PONDER_TOKENS (comma-separated addresses), CDN_PONDER_END (last block), CDN_PONDER_DB (PGlite dir).
import { createConfig } from "ponder";
import { erc20Abi } from "viem";

const tokens = (process.env.CDN_PONDER_TOKENS ?? "").split(",").filter(Boolean) as `0x${string}`[];

export default createConfig({
  database: { kind: "pglite", directory: process.env.CDN_PONDER_DB },
  chains: {
    devnet: { id: Number(process.env.CDN_PONDER_CHAIN_ID ?? 1337), rpc: process.env.CDN_PONDER_RPC!, pollingInterval: 200, disableCache: true },
  },
  contracts: {
    Token: { chain: "devnet", abi: erc20Abi, address: tokens, startBlock: 0, endBlock: process.env.CDN_PONDER_END ? Number(process.env.CDN_PONDER_END) : undefined },
  },
});
