/**
 * What `[sources.live] kind = "p2p"` accepts today, checked at start so a configuration asking for an unfinished
 * part of the devp2p lane stops with the key, its value and what is expected instead of running without it:
 * peers come from `trusted_peers`, `dns_trees`, the peer store, discv4 (`discovery_port` ≠ 0 with `discv4_bootnodes`)
 * and discv5, `nat` in one of geth's forms (net/p2p/nat/mode.ts: none, extip:<IPv4>, upnp[:<rootDesc URL>],
 * pmp[:<gateway IPv4>], any), and the
 * finality backends that exist for it (`devnet`: the devnet's rule over the verified chain, `none`: the stored one,
 * `beacon_api`: the finality lane's own Beacon API endpoints, whose finalized block anchors peer qualification).
 */
import { ConfigError } from '../node/config.js';
import type { NodeConfig } from '../node/config-schema.js';
import { parseEnode } from '../../net/p2p/enode.js';
import { parseTreeUrl } from '../../net/discovery/dns-tree.js';
import { decodeNodeRecord } from '../../net/discovery/enr.js';
import { NAT_FORMS, parseNatMode } from '../../net/p2p/nat/mode.js';

/** The IPv4 address `nat = "extip:<IPv4>"` announces, or null (another form, or none of them). */
export function announcedIp(nat: string): string | null {
  const mode = parseNatMode(nat);
  return mode?.kind === 'extip' ? mode.ip : null;
}

export function checkP2pConfig(config: NodeConfig, followsDevnet: boolean): void {
  const live = config.sources.live;
  const problems: { key: string; value: string; expected: string }[] = [];
  const discv4 = live.discovery_port !== 0 && live.discv4_bootnodes.length > 0;
  if (live.trusted_peers.length === 0 && live.dns_trees.length === 0 && !(live.enable_discv5 && live.discv5_bootnodes.length > 0) && !discv4) {
    problems.push({
      key: 'sources.live.trusted_peers', value: '[]',
      expected: 'at least one enode URL, a tree in sources.live.dns_trees, enable_discv5 with discv5_bootnodes, or discovery_port (discv4) with discv4_bootnodes',
    });
  }
  for (const [index, url] of live.discv4_bootnodes.entries()) {
    try {
      parseEnode(url);
    } catch (error) {
      problems.push({ key: `sources.live.discv4_bootnodes[${index}]`, value: JSON.stringify(url), expected: `${(error as Error).message} (the UDP port after ?discport= when it differs)` });
    }
  }
  if (live.discovery_port === 0 && live.discv4_bootnodes.length > 0) {
    problems.push({ key: 'sources.live.discovery_port', value: '0', expected: 'a UDP port (1–65535) for discv4: discv4_bootnodes is set but discv4 is off' });
  }
  if (live.discovery_port !== 0 && live.enable_discv5 && live.discv5_port === live.discovery_port) {
    problems.push({ key: 'sources.live.discv5_port', value: String(live.discv5_port), expected: `a UDP port other than discovery_port (${live.discovery_port}, discv4's)` });
  }
  for (const [index, record] of live.discv5_bootnodes.entries()) {
    try {
      decodeNodeRecord(record);
    } catch (error) {
      problems.push({ key: `sources.live.discv5_bootnodes[${index}]`, value: JSON.stringify(record), expected: `a signed node record "enr:…" (${(error as Error).message})` });
    }
  }
  for (const [index, url] of live.dns_trees.entries()) {
    try {
      parseTreeUrl(url);
    } catch (error) {
      problems.push({ key: `sources.live.dns_trees[${index}]`, value: JSON.stringify(url), expected: (error as Error).message });
    }
  }
  if (live.dns_server !== '' && !/^(\d{1,3}(\.\d{1,3}){3}|\[[0-9a-fA-F:]+\]):\d{1,5}$/.test(live.dns_server)) {
    problems.push({ key: 'sources.live.dns_server', value: JSON.stringify(live.dns_server), expected: '"" (the system resolver) or an IP:port, e.g. 127.0.0.1:53' });
  }
  for (const [index, url] of live.trusted_peers.entries()) {
    try {
      parseEnode(url);
    } catch (error) {
      problems.push({ key: `sources.live.trusted_peers[${index}]`, value: JSON.stringify(url), expected: (error as Error).message });
    }
  }
  if (parseNatMode(live.nat) === null) {
    problems.push({ key: 'sources.live.nat', value: JSON.stringify(live.nat), expected: `${NAT_FORMS} (e.g. "extip:203.0.113.7", "upnp:http://192.168.1.1:5000/rootDesc.xml", "pmp:192.168.1.1")` });
  }
  const finality = config.finality.kind;
  if (finality === 'rpc' || (finality === 'devnet' && !followsDevnet)) {
    problems.push({
      key: 'finality.kind', value: JSON.stringify(finality),
      expected: followsDevnet ? '"devnet", "beacon_api", "consensus_p2p" or "none" with sources.live.kind = "p2p"' : '"beacon_api", "consensus_p2p" or "none" with sources.live.kind = "p2p" on a chain from genesis_file',
    });
  }
  if (problems.length > 0) throw new ConfigError(problems);
}
