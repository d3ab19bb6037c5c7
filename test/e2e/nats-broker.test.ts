/**
 * The NATS test support (test/support/nats-server.ts) against the real `nats-server`: a single JetStream server keeps
 * its stream across a kill and restart and fences publishes by the subject's last sequence and message id; a
 * three-server cluster holds an R3 stream that survives a `kill -9` of its leader.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from '@nats-io/transport-node';
import { jetstream, jetstreamManager, JetStreamApiError } from '@nats-io/jetstream';
import { startNatsCluster, startNatsServer } from '../support/nats-server.js';

const fenced = (n: number) => ({ expect: { lastSubjectSequence: n } });

test('one JetStream server: a fenced publish is refused on a wrong last subject sequence, a repeated id is a duplicate, and the stream survives kill -9', async () => {
  const server = await startNatsServer();
  try {
    let nc = await connect({ servers: server.url });
    const jsm = await jetstreamManager(nc);
    await jsm.streams.add({ name: 'T', subjects: ['t.>'], num_replicas: 1 });
    const js = jetstream(nc);
    assert.equal((await js.publish('t.a', 'one', { msgID: 'x:1', ...fenced(0) })).seq, 1);
    await assert.rejects(js.publish('t.a', 'again', { msgID: 'x:2', ...fenced(0) }), (error) => error instanceof JetStreamApiError && error.code === 10071);
    assert.equal((await js.publish('t.a', 'one', { msgID: 'x:1', ...fenced(0) })).duplicate, true);
    await nc.close();
    await server.stop();
    await server.restart();
    nc = await connect({ servers: server.url });
    const last = await (await jetstreamManager(nc)).streams.getMessage('T', { last_by_subj: 't.a' });
    assert.equal([last?.seq, last?.string()].join(), '1,one');
    await nc.close();
  } finally {
    await server.close();
  }
});

test('three JetStream servers: an R3 stream keeps every acknowledged message after kill -9 of its leader', async () => {
  const servers = await startNatsCluster();
  try {
    const nc = await connect({ servers: servers.map((s) => s.url) });
    const jsm = await jetstreamManager(nc);
    const info = await jsm.streams.add({ name: 'R', subjects: ['r.>'], num_replicas: 3 });
    assert.equal(info.config.num_replicas, 3);
    const js = jetstream(nc);
    for (let i = 1; i <= 5; i += 1) await js.publish('r.a', String(i), { msgID: `r:${i}`, ...fenced(i - 1) });
    const leader = (await jsm.streams.info('R')).cluster?.leader;
    const victim = servers.find((s) => s.name === leader);
    assert.ok(victim, `the leader ${leader} is one of ours`);
    await victim.stop();
    for (;;) {
      try {
        const ack = await js.publish('r.a', '6', { msgID: 'r:6', ...fenced(5), timeout: 2000 });
        assert.equal(ack.seq, 6);
        break;
      } catch (error) {
        if (error instanceof JetStreamApiError && error.code === 10071) throw error;
        // no leader yet: the publish times out or is refused until the remaining two elect one
      }
    }
    const last = await jsm.streams.getMessage('R', { last_by_subj: 'r.a' });
    assert.equal([last?.seq, last?.string()].join(), '6,6');
    await nc.close();
  } finally {
    await Promise.all(servers.map((s) => s.close()));
  }
});
