import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { HOT_WINDOW_MS, PeerStore } from '../../../net/discovery/peer-store.js';

const dir = mkdtempSync(join(tmpdir(), 'cdn-peer-store-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const peer = (n: number) => ({ id: n.toString(16).padStart(128, '0'), host: '127.0.0.1', tcpPort: 30000 + n, udpPort: 30000 + n });

describe('peer store', () => {
  it('keeps at most maxEntries, dropping the least recently seen, and survives a restart', () => {
    let now = 1_000;
    const path = join(dir, 'a.json');
    const store = new PeerStore(path, 3, () => now);
    for (let n = 1; n <= 4; n++) {
      now += 10;
      store.note(peer(n));
    }
    assert.deepEqual(store.records().map((r) => r.tcpPort), [30004, 30003, 30002]);
    store.save();
    const reopened = new PeerStore(path, 3, () => now);
    assert.deepEqual(reopened.records().map((r) => r.tcpPort), [30004, 30003, 30002]);
  });

  it('a peer that qualified within a day is hot, the others broad', () => {
    let now = 5_000_000;
    const store = new PeerStore(join(dir, 'b.json'), 10, () => now);
    store.note(peer(1), true);
    store.note(peer(2));
    const [first, second] = [store.records().find((r) => r.tcpPort === 30001)!, store.records().find((r) => r.tcpPort === 30002)!];
    assert.equal(store.isHot(first), true);
    assert.equal(store.isHot(second), false);
    now += HOT_WINDOW_MS;
    assert.equal(store.isHot(first), false);
  });

  it('a corrupt file is set aside and the store starts empty', () => {
    const path = join(dir, 'c.json');
    writeFileSync(path, '{ not json');
    const store = new PeerStore(path, 10);
    assert.equal(store.size, 0);
    assert.ok(existsSync(`${path}.corrupt`));
  });
});
