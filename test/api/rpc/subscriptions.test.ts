/**
 * The subscription hub over a devnet store whose journal holds reorgs: newHeads for every applied
 * block, logs in journal order with an abandoned block's logs re-sent `removed: true` before the
 * replacement branch's, filters applied, and a connection past its buffer bound closed with 1013.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { decodeJournalMove } from '../../../store/journal.js';
import { bytesToHex } from '../../../net/eth/hex.js';
import { TRANSFER_TOPIC } from '../../../net/devnet/index.js';
import { ChainReader } from '../../../api/rpc/chain-reader.js';
import { CLOSE_TRY_AGAIN_LATER, SubscriptionHub, type SubscriberSocket } from '../../../api/rpc/subscriptions.js';
import { devnetStore, type DevnetStore } from './devnet-store.js';

interface Note { subscription: string; result: { hash?: string; number?: string; blockHash?: string; removed?: boolean; topics?: string[] } }

function fakeSocket(buffered: () => number = () => 0): SubscriberSocket & { notes: Note[]; closedWith: number | null } {
  const socket = {
    notes: [] as Note[],
    closedWith: null as number | null,
    send(text: string) {
      socket.notes.push((JSON.parse(text) as { params: Note }).params);
      return true;
    },
    bufferedBytes: buffered,
    close(code: number) {
      socket.closedWith = code;
    },
  };
  return socket;
}

let d: DevnetStore;
before(async () => {
  d = await devnetStore({ seed: 'rpc-subscriptions', reorgEvery: 10, reorgDepth: 2, finalityLag: 4 }, 32);
});
after(async () => {
  await d?.close();
});

describe('subscription hub', () => {
  it('publishes every applied head and every log in journal order, removed logs before their replacements', () => {
    const hub = new SubscriptionHub(new ChainReader(d.store, { entries: 64, bytes: 1 << 30 }), { maxBufferedBytes: 1 << 20, maxSubscriptionsPerConnection: 10, afterSequence: 0 });
    const socket = fakeSocket();
    const connection = hub.openConnection(socket);
    const heads = JSON.parse(hub.subscribe(connection, ['newHeads'])) as string;
    const logs = JSON.parse(hub.subscribe(connection, ['logs', {}])) as string;
    const transfers = JSON.parse(hub.subscribe(connection, ['logs', { topics: [[TRANSFER_TOPIC]] }])) as string;
    hub.onJournal(d.chain.sequence);

    const moves = [...d.store.chain.journal.getRange({})].map(({ value }) => decodeJournalMove(value));
    const applied = moves.filter((m) => m.op === 'apply').map((m) => bytesToHex(m.hash));
    assert.deepEqual(socket.notes.filter((n) => n.subscription === heads).map((n) => n.result.hash), applied);
    assert.ok(moves.some((m) => m.op === 'undo'), 'the run reorged');

    const logNotes = socket.notes.filter((n) => n.subscription === logs).map((n) => n.result);
    const expected = moves.flatMap((move) => {
      if (move.op === 'finalize') return [];
      const hash = bytesToHex(move.hash);
      const block = d.run.produced.get(hash)!;
      return block.receipts.flatMap((r) => r.logs).map(() => [hash, move.op === 'undo']);
    });
    assert.deepEqual(logNotes.map((l) => [l.blockHash, l.removed]), expected);
    for (const [index, note] of logNotes.entries()) {
      if (!note.removed) continue;
      assert.ok(logNotes.slice(0, index).some((earlier) => !earlier.removed && earlier.blockHash === note.blockHash), 'a removed log was sent live before');
    }
    const transferNotes = socket.notes.filter((n) => n.subscription === transfers).map((n) => n.result);
    assert.ok(transferNotes.length > 0 && transferNotes.every((l) => l.topics?.[0] === TRANSFER_TOPIC));
    assert.equal(transferNotes.length, logNotes.filter((l) => l.topics?.[0] === TRANSFER_TOPIC).length);
  });

  it('publishes nothing again for a notice it has already seen, and nothing after unsubscribe', () => {
    const hub = new SubscriptionHub(new ChainReader(d.store, { entries: 64, bytes: 1 << 30 }), { maxBufferedBytes: 1 << 20, maxSubscriptionsPerConnection: 10, afterSequence: d.chain.sequence - 3 });
    const socket = fakeSocket();
    const connection = hub.openConnection(socket);
    const id = JSON.parse(hub.subscribe(connection, ['newHeads'])) as string;
    hub.onJournal(d.chain.sequence);
    const count = socket.notes.length;
    assert.ok(count > 0);
    hub.onJournal(d.chain.sequence);
    assert.equal(socket.notes.length, count);
    assert.equal(hub.unsubscribe(connection, [id]), 'true');
    assert.equal(hub.unsubscribe(connection, [id]), 'false');
    assert.equal(hub.subscriberCount, 0);
  });

  it('lets only the connection that made a subscription remove it: another connection\'s eth_unsubscribe answers false and changes nothing', () => {
    const hub = new SubscriptionHub(new ChainReader(d.store, { entries: 64, bytes: 1 << 30 }), { maxBufferedBytes: 1 << 20, maxSubscriptionsPerConnection: 10, afterSequence: d.chain.sequence - 3 });
    const owner = fakeSocket();
    const ownerConnection = hub.openConnection(owner);
    const stranger = hub.openConnection(fakeSocket());
    const id = JSON.parse(hub.subscribe(ownerConnection, ['newHeads'])) as string;
    assert.equal(hub.unsubscribe(stranger, [id]), 'false');
    assert.equal(hub.subscriberCount, 1);
    hub.onJournal(d.chain.sequence);
    assert.ok(owner.notes.length > 0, 'the owner still receives its notifications');
    assert.ok(owner.notes.every((note) => note.subscription === id));
    assert.equal(hub.unsubscribe(ownerConnection, [id]), 'true');
    assert.equal(hub.subscriberCount, 0);
  });

  it('closes a connection whose queued bytes pass the bound with 1013 and sends it nothing more', () => {
    let buffered = 0;
    const hub = new SubscriptionHub(new ChainReader(d.store, { entries: 64, bytes: 1 << 30 }), { maxBufferedBytes: 4096, maxSubscriptionsPerConnection: 10, afterSequence: 0 });
    const slow = fakeSocket(() => buffered);
    const healthy = fakeSocket();
    const slowConnection = hub.openConnection(slow);
    hub.subscribe(slowConnection, ['newHeads']);
    hub.subscribe(hub.openConnection(healthy), ['newHeads']);
    hub.onJournal(3);
    assert.equal(slow.closedWith, null);
    buffered = 5000;
    hub.onJournal(d.chain.sequence);
    assert.equal(slow.closedWith, CLOSE_TRY_AGAIN_LATER);
    assert.equal(slow.notes.length, 4, 'three heads before, the one that overflowed, nothing after');
    assert.ok(slowConnection.closed);
    assert.ok(healthy.notes.length > slow.notes.length);
  });

  it('refuses unknown kinds, bad filters and subscriptions over the per-connection limit', () => {
    const hub = new SubscriptionHub(new ChainReader(d.store, { entries: 64, bytes: 1 << 30 }), { maxBufferedBytes: 4096, maxSubscriptionsPerConnection: 2 });
    const connection = hub.openConnection(fakeSocket());
    assert.throws(() => hub.subscribe(connection, ['newPendingTransactions']), /no "newPendingTransactions" subscription/);
    assert.throws(() => hub.subscribe(connection, ['logs', { address: 'nope' }]), /invalid address/);
    hub.subscribe(connection, ['newHeads']);
    hub.subscribe(connection, ['logs']);
    assert.throws(() => hub.subscribe(connection, ['newHeads']), (error: Error & { code?: number }) => error.code === -32005);
  });
});
