/**
 * What `[sources.live] kind = "p2p"` accepts today, checked at start so a configuration asking for an unfinished
 * part of the devp2p lane stops with the key, its value and what is expected instead of running without it:
 * peers come from `trusted_peers` only (discv4, discv5 and DNS trees are not wired yet), no NAT mapping, and the
 * finality backends that exist for it (`devnet`: the devnet's rule over the verified chain, `none`: the stored one).
 */
import { ConfigError } from '../node/config.js';
import type { NodeConfig } from '../node/config-schema.js';
import { parseEnode } from '../../net/p2p/enode.js';

export function checkP2pConfig(config: NodeConfig, followsDevnet: boolean): void {
  const live = config.sources.live;
  const problems: { key: string; value: string; expected: string }[] = [];
  if (live.trusted_peers.length === 0) {
    problems.push({ key: 'sources.live.trusted_peers', value: '[]', expected: 'at least one enode URL: peer discovery (discv4, discv5, DNS trees) is not implemented yet, so trusted peers are the only peers' });
  }
  for (const [index, url] of live.trusted_peers.entries()) {
    try {
      parseEnode(url);
    } catch (error) {
      problems.push({ key: `sources.live.trusted_peers[${index}]`, value: JSON.stringify(url), expected: (error as Error).message });
    }
  }
  if (live.discovery_port !== 0) problems.push({ key: 'sources.live.discovery_port', value: String(live.discovery_port), expected: '0: discv4 discovery is not implemented yet' });
  if (live.enable_discv5) problems.push({ key: 'sources.live.enable_discv5', value: 'true', expected: 'false: discv5 discovery is not implemented yet' });
  if (live.discv5_port !== 0) problems.push({ key: 'sources.live.discv5_port', value: String(live.discv5_port), expected: '0: discv5 discovery is not implemented yet' });
  if (live.nat !== 'none') problems.push({ key: 'sources.live.nat', value: JSON.stringify(live.nat), expected: '"none": NAT mapping and announced addresses are not implemented yet' });
  const finality = config.finality.kind;
  if (finality === 'rpc' || (finality === 'devnet' && !followsDevnet)) {
    problems.push({
      key: 'finality.kind', value: JSON.stringify(finality),
      expected: followsDevnet ? '"devnet" or "none" with sources.live.kind = "p2p"' : '"none" with sources.live.kind = "p2p" on a chain from genesis_file (consensus finality backends are not available yet)',
    });
  }
  if (problems.length > 0) throw new ConfigError(problems);
}
