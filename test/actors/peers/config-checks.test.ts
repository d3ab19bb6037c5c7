/** `[sources.live] nat` for kind = "p2p": "none" or "extip:<IPv4>" accepted; anything else refused naming the key. */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../../../actors/node/config.js';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { announcedIp, checkP2pConfig } from '../../../actors/peers/config-checks.js';
import { formatEnode, nodeIdOf } from '../../../net/p2p/enode.js';

function check(nat: string): ConfigError | null {
  const dir = mkdtempSync(join(tmpdir(), 'cdn-p2p-config-'));
  try {
    const file = join(dir, 'node.toml');
    writeFileSync(file, `[sources.live]\nkind = "p2p"\ntrusted_peers = ["${formatEnode(nodeIdOf(secp256k1.utils.randomSecretKey()), '127.0.0.1', 30303)}"]\nnat = ${JSON.stringify(nat)}\n[finality]\nkind = "none"\n`);
    checkP2pConfig(loadConfig(file).config, false);
    return null;
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('sources.live.nat', () => {
  it('reads the announced IPv4 address of "extip:<IPv4>" and nothing else', () => {
    assert.equal(announcedIp('extip:203.0.113.7'), '203.0.113.7');
    assert.equal(announcedIp('none'), null);
    assert.equal(announcedIp('extip:256.1.1.1'), null);
    assert.equal(announcedIp('extip:1.2.3'), null);
    assert.equal(announcedIp('upnp'), null);
  });

  it('accepts "none" and "extip:<IPv4>"; refuses other values naming the key and what is expected', () => {
    assert.equal(check('none'), null);
    assert.equal(check('extip:203.0.113.7'), null);
    for (const nat of ['upnp', 'pmp', 'any', 'extip:example.org']) {
      const error = check(nat);
      assert.ok(error, `${nat} is refused`);
      const problem = error.problems.find((p) => p.key === 'sources.live.nat');
      assert.ok(problem, `sources.live.nat named for ${nat}`);
      assert.equal(problem.value, JSON.stringify(nat));
      assert.match(problem.expected, /extip:<IPv4>/);
    }
  });
});
