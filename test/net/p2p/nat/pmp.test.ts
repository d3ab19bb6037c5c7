/**
 * NAT-PMP (RFC 6886) against a stub gateway on 127.0.0.1:5351 (the protocol's fixed port; skipped with a message
 * when something else holds it): the external address, UDP and TCP mappings with the lifetime the gateway grants
 * (it may differ from the one asked, and renewals follow it), deletion by lifetime 0 on stop, and a refusal
 * (result code 2) leaving the mapper failed; and `any` taking NAT-PMP when it answers first.
 */
import assert from 'node:assert/strict';
import { createSocket, type Socket } from 'node:dgram';
import { describe, it } from 'node:test';
import { NAT_PMP_PORT, PmpGateway } from '../../../../net/p2p/nat/pmp.js';
import { findGateway, PortMapper } from '../../../../net/p2p/nat/port-mapper.js';
import { recordingLogger, recordingMetrics, until } from '../../../support/nat-helpers.js';

interface PmpRequest {
  readonly opcode: number;
  readonly internalPort: number;
  readonly externalPort: number;
  readonly lifetime: number;
}

async function startPmpStub(externalIp: string, grantedLifetime: number): Promise<{ socket: Socket; requests: PmpRequest[]; refuse: { result: number } } | null> {
  const socket = createSocket('udp4');
  const requests: PmpRequest[] = [];
  const refuse = { result: 0 };
  const epoch = Math.floor(Date.now() / 1000) & 0xffffffff;
  socket.on('message', (message, from) => {
    const opcode = message[1]!;
    const answer = Buffer.alloc(opcode === 0 ? 12 : 16);
    answer[0] = 0;
    answer[1] = 128 + opcode;
    answer.writeUInt16BE(refuse.result, 2);
    answer.writeUInt32BE(epoch, 4);
    if (opcode === 0) {
      requests.push({ opcode, internalPort: 0, externalPort: 0, lifetime: 0 });
      Buffer.from(externalIp.split('.').map(Number)).copy(answer, 8);
    } else {
      const request = { opcode, internalPort: message.readUInt16BE(4), externalPort: message.readUInt16BE(6), lifetime: message.readUInt32BE(8) };
      requests.push(request);
      answer.writeUInt16BE(request.internalPort, 8);
      // The gateway maps to external port internal + 1000 and grants its own lifetime (0 when deleting).
      answer.writeUInt16BE(request.lifetime === 0 ? 0 : request.internalPort + 1000, 10);
      answer.writeUInt32BE(request.lifetime === 0 ? 0 : grantedLifetime, 12);
    }
    socket.send(answer, from.port, from.address);
  });
  const bound = await new Promise<boolean>((resolve) => {
    socket.once('error', () => resolve(false));
    socket.bind(NAT_PMP_PORT, '127.0.0.1', () => resolve(true));
  });
  if (!bound) {
    socket.close();
    return null;
  }
  return { socket, requests, refuse };
}

describe('NAT-PMP', () => {
  it('maps UDP and TCP ports at the gateway, renews by the granted lifetime and deletes them on stop', async (t) => {
    const stub = await startPmpStub('198.51.100.4', 2);
    if (!stub) {
      t.skip(`127.0.0.1:${NAT_PMP_PORT} (UDP) is taken: the NAT-PMP stub cannot run`);
      return;
    }
    t.after(() => stub.socket.close());
    const gateway = await PmpGateway.at('127.0.0.1');
    assert.equal(gateway.internalAddress, '127.0.0.1');
    assert.equal(await gateway.externalIp(AbortSignal.timeout(5000)), '198.51.100.4');

    const { seen, metrics } = recordingMetrics();
    const announced: unknown[] = [];
    const mapper = new PortMapper({
      mode: { kind: 'pmp', gateway: '127.0.0.1' }, leaseSeconds: 600, log: recordingLogger(), metrics, onAnnounce: (a) => announced.push(a),
      ports: [{ purpose: 'rlpx', protocol: 'tcp', internalPort: 30_341 }, { purpose: 'discv5', protocol: 'udp', internalPort: 30_342 }],
    });
    mapper.start();
    await mapper.firstAttempt();
    const status = mapper.status();
    assert.equal(status.state, 'mapped', JSON.stringify(status));
    assert.equal(status.gateway, 'pmp');
    assert.equal(status.externalAddress, '198.51.100.4');
    assert.deepEqual(status.mappings.map((m) => [m.purpose, m.protocol, m.internalPort, m.externalPort, m.leaseSeconds]), [['rlpx', 'tcp', 30_341, 31_341, 2], ['discv5', 'udp', 30_342, 31_342, 2]]);
    assert.deepEqual(announced, [{ ip: '198.51.100.4', ports: { rlpx: 31_341, discv5: 31_342 } }]);
    const maps = () => stub.requests.filter((r) => r.opcode !== 0 && r.lifetime > 0);
    assert.deepEqual(maps().slice(0, 2), [{ opcode: 2, internalPort: 30_341, externalPort: 30_341, lifetime: 600 }, { opcode: 1, internalPort: 30_342, externalPort: 30_342, lifetime: 600 }]);
    // The gateway granted 2 s: renewed at 1 s, asking for the external port it gave.
    // The renewal is counted once the gateway has answered it, a moment after the stub saw the request: wait for both.
    await until(() => maps().length >= 4 && seen.renewals >= 1, 5000, 'renewal by the granted lifetime');
    assert.deepEqual(maps()[2], { opcode: 2, internalPort: 30_341, externalPort: 31_341, lifetime: 600 });
    await mapper.stop();
    assert.deepEqual(stub.requests.filter((r) => r.opcode !== 0 && r.lifetime === 0).map((r) => [r.opcode, r.internalPort]).sort(), [[1, 30_342], [2, 30_341]]);
  });

  it('a refusing gateway leaves the mapper failed with the result code', async (t) => {
    const stub = await startPmpStub('198.51.100.4', 60);
    if (!stub) {
      t.skip(`127.0.0.1:${NAT_PMP_PORT} (UDP) is taken: the NAT-PMP stub cannot run`);
      return;
    }
    t.after(() => stub.socket.close());
    stub.refuse.result = 2;
    const { metrics } = recordingMetrics();
    const mapper = new PortMapper({
      mode: { kind: 'pmp', gateway: '127.0.0.1' }, leaseSeconds: 600, log: recordingLogger(), metrics, onAnnounce: () => undefined,
      ports: [{ purpose: 'rlpx', protocol: 'tcp', internalPort: 30_351 }],
    });
    t.after(() => mapper.stop());
    mapper.start();
    await mapper.firstAttempt();
    assert.equal(mapper.status().state, 'failed');
    assert.match(mapper.status().lastError ?? '', /result 2 \(not authorized or refused\)/);
  });

  it('nat = "any" takes NAT-PMP when it answers first (the default gateway aimed at the stub)', async (t) => {
    const stub = await startPmpStub('198.51.100.4', 60);
    if (!stub) {
      t.skip(`127.0.0.1:${NAT_PMP_PORT} (UDP) is taken: the NAT-PMP stub cannot run`);
      return;
    }
    t.after(() => stub.socket.close());
    const { metrics } = recordingMetrics();
    const mapper = new PortMapper({
      mode: { kind: 'any' }, leaseSeconds: 600, log: recordingLogger(), metrics, onAnnounce: () => undefined,
      ports: [{ purpose: 'rlpx', protocol: 'tcp', internalPort: 30_371 }],
    }, (mode, signal) => findGateway(mode, signal, () => '127.0.0.1'));
    mapper.start();
    await mapper.firstAttempt();
    assert.equal(mapper.status().state, 'mapped', JSON.stringify(mapper.status()));
    assert.equal(mapper.status().gateway, 'pmp');
    assert.equal(mapper.status().mode, 'any');
    await mapper.stop();
  });
});
