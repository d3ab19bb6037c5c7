/** TXT look-ups for EIP-1459 trees through node:dns (c-ares), against the system resolver or a given `host:port`. */
import { Resolver } from 'node:dns/promises';
import type { TxtResolver } from './dns-tree.js';

export function dnsTxtResolver(server: string | null, timeoutMs = 5000): TxtResolver {
  const resolver = new Resolver({ timeout: timeoutMs, tries: 2 });
  if (server) resolver.setServers([server]);
  return async (name) => {
    const records = await resolver.resolveTxt(name);
    // One entry per name; a long entry arrives split into 255-byte character strings.
    const first = records[0];
    if (!first) throw new Error(`no TXT record at ${name}`);
    return first.join('');
  };
}
