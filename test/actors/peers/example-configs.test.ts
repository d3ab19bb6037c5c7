import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { loadConfig } from '../../../actors/node/config.js';
import { devnetPeerKey } from '../../../net/devnet/p2p-server.js';
import { formatEnode, nodeIdOf } from '../../../net/p2p/enode.js';
import { PROJECT_ROOT } from '../../support/paths.js';

test('the example p2p configs load, and the follower names the enode the devnet peer of the serving config has', () => {
  const serving = loadConfig(join(PROJECT_ROOT, 'examples', 'devnet-serve-p2p.toml')).config;
  const follower = loadConfig(join(PROJECT_ROOT, 'examples', 'p2p-follow-devnet.toml')).config;
  assert.equal(follower.sources.live.kind, 'p2p');
  const [host, port] = serving.devnet.p2p_listen.split(':');
  assert.deepEqual(follower.sources.live.trusted_peers, [formatEnode(nodeIdOf(devnetPeerKey(serving.devnet.seed)), host!, Number(port))]);
  assert.equal(follower.devnet.seed, serving.devnet.seed);
});

test('the no-RPC example follows the serving config\'s devnet peer and takes its consensus peer as bootnode, with p2p history only', () => {
  const serving = loadConfig(join(PROJECT_ROOT, 'examples', 'devnet-serve-p2p.toml')).config;
  const noRpc = loadConfig(join(PROJECT_ROOT, 'examples', 'p2p-no-rpc-devnet.toml')).config;
  const [host, port] = serving.devnet.p2p_listen.split(':');
  assert.deepEqual(noRpc.sources.live.trusted_peers, [formatEnode(nodeIdOf(devnetPeerKey(serving.devnet.seed)), host!, Number(port))]);
  assert.equal(noRpc.devnet.beacon_p2p, serving.devnet.beacon_p2p);
  assert.equal(noRpc.finality.kind, 'consensus_p2p');
  assert.equal(noRpc.sources.live.start, 'finalized');
  assert.deepEqual(noRpc.sources.history.map((source) => source.kind), ['p2p']);
  assert.deepEqual(noRpc.processors.map((p) => [p.id, p.kind, p.start_block]), [['erc20', 'erc20', 0]]);
});
