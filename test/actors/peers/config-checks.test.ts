/** `[sources.live] nat` for kind = "p2p": geth's `--nat` forms accepted and read; anything else refused naming the key, the value and the forms. */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../../../actors/node/config.js';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { announcedIp, checkP2pConfig } from '../../../actors/peers/config-checks.js';
import { formatEnode, nodeIdOf } from '../../../net/p2p/enode.js';
import { parseNatMode } from '../../../net/p2p/nat/mode.js';

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

  it('reads every form geth\'s --nat takes', () => {
    assert.deepEqual(parseNatMode('none'), { kind: 'none' });
    assert.deepEqual(parseNatMode('extip:203.0.113.7'), { kind: 'extip', ip: '203.0.113.7' });
    assert.deepEqual(parseNatMode('upnp'), { kind: 'upnp', descriptionUrl: null });
    assert.deepEqual(parseNatMode('upnp:http://192.168.1.1:5000/rootDesc.xml'), { kind: 'upnp', descriptionUrl: 'http://192.168.1.1:5000/rootDesc.xml' });
    assert.deepEqual(parseNatMode('pmp'), { kind: 'pmp', gateway: null });
    assert.deepEqual(parseNatMode('pmp:192.168.1.1'), { kind: 'pmp', gateway: '192.168.1.1' });
    assert.deepEqual(parseNatMode('any'), { kind: 'any' });
  });

  it('accepts every form; refuses other values naming the key, the value and the accepted forms', () => {
    for (const nat of ['none', 'extip:203.0.113.7', 'upnp', 'upnp:http://127.0.0.1:5000/rootDesc.xml', 'pmp', 'pmp:10.0.0.1', 'any']) {
      assert.equal(check(nat), null, `${nat} is accepted`);
    }
    const refused = [
      'extip:example.org', 'extip:256.1.1.1', 'extip:01.2.3.4', 'extip:', 'UPNP', 'upnp:', 'upnp:ftp://10.0.0.1/rootDesc.xml', 'upnp:https://10.0.0.1/rootDesc.xml',
      'upnp:http://user:secret@10.0.0.1/rootDesc.xml', 'upnp:not a url', 'pmp:', 'pmp:gateway.lan', 'pmp:10.0.0.1:5351', 'any:10.0.0.1', 'stun', '',
    ];
    for (const nat of refused) {
      const error = check(nat);
      assert.ok(error, `${nat} is refused`);
      const problem = error.problems.find((p) => p.key === 'sources.live.nat');
      assert.ok(problem, `sources.live.nat named for ${nat}`);
      assert.equal(problem.value, JSON.stringify(nat));
      for (const form of ['"none"', 'extip:<IPv4>', '"upnp"', 'upnp:<', '"pmp"', 'pmp:<gateway IPv4>', '"any"']) assert.ok(problem.expected.includes(form), `${form} in: ${problem.expected}`);
    }
  });

  it('refuses a lease shorter than 2 s naming sources.live.nat_lease_seconds', () => {
    const dir = mkdtempSync(join(tmpdir(), 'cdn-p2p-config-'));
    try {
      const file = join(dir, 'node.toml');
      writeFileSync(file, '[sources.live]\nkind = "p2p"\nnat = "upnp"\nnat_lease_seconds = 1\n');
      assert.throws(() => loadConfig(file), (error: unknown) => error instanceof ConfigError && error.problems.some((p) => p.key === 'sources.live.nat_lease_seconds'));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
