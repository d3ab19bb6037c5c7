/**
 * The NAT port mapper against a stub UPnP gateway on 127.0.0.1 (test/support/igd-stub.ts): it maps each port for the
 * lease, learns and announces the external address, renews before the lease ends, removes the mappings on stop,
 * and a gateway that refuses leaves it `failed` with a retry countdown until the gateway answers again.
 * With nat = "upnp" the gateway is found by an SSDP M-SEARCH a stub responder on 239.255.255.250:1900 answers (skipped
 * with a message where UDP 1900 or multicast membership is unavailable). Plus the pure parts: the device description's
 * WAN service and the Linux default gateway.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { createSocket } from 'node:dgram';
import { PortMapper, type NatAnnouncement } from '../../../../net/p2p/nat/port-mapper.js';
import { wanServiceOf } from '../../../../net/p2p/nat/upnp.js';
import { defaultGateway } from '../../../../net/p2p/nat/pmp.js';
import { startIgdStub } from '../../../support/igd-stub.js';
import { recordingLogger, recordingMetrics, until } from '../../../support/nat-helpers.js';

describe('NAT port mapper over UPnP', () => {
  it('maps every port for the lease, announces the external address, renews at half the lease, follows an address change and unmaps on stop', async (t) => {
    const igd = await startIgdStub('203.0.113.9');
    t.after(() => igd.close());
    const { seen, metrics } = recordingMetrics();
    const announced: NatAnnouncement[] = [];
    const mapper = new PortMapper({
      mode: { kind: 'upnp', descriptionUrl: igd.descriptionUrl }, leaseSeconds: 2, log: recordingLogger(), metrics, onAnnounce: (a) => announced.push(a),
      ports: [{ purpose: 'rlpx', protocol: 'tcp', internalPort: 30_311 }, { purpose: 'discv4', protocol: 'udp', internalPort: 30_312 }],
    });
    mapper.start();
    await mapper.firstAttempt();
    const status = mapper.status();
    assert.equal(status.state, 'mapped', JSON.stringify(status));
    assert.equal(status.gateway, 'upnp');
    assert.equal(status.externalAddress, '203.0.113.9');
    assert.deepEqual(status.mappings.map((m) => [m.purpose, m.protocol, m.internalPort, m.externalPort, m.leaseSeconds]), [['rlpx', 'tcp', 30_311, 30_311, 2], ['discv4', 'udp', 30_312, 30_312, 2]]);
    assert.ok(status.renewInSeconds !== null && status.renewInSeconds <= 1);
    assert.deepEqual(announced, [{ ip: '203.0.113.9', ports: { rlpx: 30_311, discv4: 30_312 } }]);
    const adds = () => igd.calls.filter((c) => c.action === 'AddPortMapping');
    assert.deepEqual(adds().map((c) => [c.args.NewProtocol, c.args.NewExternalPort, c.args.NewInternalPort, c.args.NewInternalClient, c.args.NewLeaseDuration, c.args.NewEnabled]),
      [['TCP', '30311', '30311', '127.0.0.1', '2', '1'], ['UDP', '30312', '30312', '127.0.0.1', '2', '1']]);
    // Renewed at half the 2 s lease (the countdown above), twice over; nothing announced again (same address and ports).
    // The mapper counts a renewal once the gateway has answered it, a moment after the stub saw the call: wait for both.
    await until(() => adds().length >= 6 && seen.renewals >= 2, 10_000, 'two renewals');
    assert.deepEqual(adds().slice(2, 4).map((c) => [c.args.NewProtocol, c.args.NewExternalPort, c.args.NewLeaseDuration]), [['TCP', '30311', '2'], ['UDP', '30312', '2']]);
    assert.equal(announced.length, 1);
    // The gateway's external address changes: the next renewal learns it and announces it.
    igd.externalIp = '203.0.113.10';
    await until(() => announced.length === 2, 10_000, 'the new address announced');
    assert.deepEqual(announced[1], { ip: '203.0.113.10', ports: { rlpx: 30_311, discv4: 30_312 } });
    assert.equal(mapper.status().externalAddress, '203.0.113.10');
    await mapper.stop();
    assert.deepEqual(igd.calls.filter((c) => c.action === 'DeletePortMapping').map((c) => [c.args.NewProtocol, c.args.NewExternalPort]).sort(), [['TCP', '30311'], ['UDP', '30312']]);
    assert.equal(igd.mappings.size, 0);
    assert.equal(mapper.status().state, 'off');
    assert.equal(seen.mapped.at(-1), 0);
  });

  it('a gateway that refuses leaves it failed with a retry countdown, and it maps once the gateway answers', async (t) => {
    const igd = await startIgdStub('203.0.113.9');
    t.after(() => igd.close());
    igd.refuse = true;
    const { seen, metrics } = recordingMetrics();
    const lines: string[] = [];
    const mapper = new PortMapper({
      mode: { kind: 'upnp', descriptionUrl: igd.descriptionUrl }, leaseSeconds: 60, log: recordingLogger(lines), metrics, onAnnounce: () => undefined,
      ports: [{ purpose: 'rlpx', protocol: 'tcp', internalPort: 30_321 }],
    });
    t.after(() => mapper.stop());
    mapper.start();
    await mapper.firstAttempt();
    const failed = mapper.status();
    assert.equal(failed.state, 'failed');
    assert.equal(failed.failures, 1);
    assert.match(failed.lastError ?? '', /^external_ip: GetExternalIPAddress refused: HTTP 500, UPnP error 501 \(Action Failed\)/);
    assert.ok(failed.retryInSeconds !== null && failed.retryInSeconds >= 1 && failed.retryInSeconds <= 2, `retry in ${failed.retryInSeconds}`);
    assert.deepEqual(seen.failures, ['external_ip']);
    assert.ok(lines.some((l) => l.startsWith('warn NAT port mapping failed; retrying')));
    igd.refuse = false;
    await until(() => mapper.status().state === 'mapped', 10_000, 'mapped after the gateway answers');
    assert.equal(mapper.status().failures, 0);
    assert.equal(mapper.status().failuresTotal, 1);
    assert.ok(igd.mappings.has('TCP/30321'));
  });

  it('a gateway that cannot be reached is failed, not fatal', async () => {
    const { metrics } = recordingMetrics();
    const mapper = new PortMapper({
      mode: { kind: 'upnp', descriptionUrl: 'http://127.0.0.1:9/rootDesc.xml' }, leaseSeconds: 60, log: recordingLogger(), metrics, onAnnounce: () => undefined,
      ports: [{ purpose: 'rlpx', protocol: 'tcp', internalPort: 30_331 }],
    });
    mapper.start();
    await mapper.firstAttempt();
    assert.equal(mapper.status().state, 'failed');
    assert.match(mapper.status().lastError ?? '', /^discover: /);
    await mapper.stop();
  });
});

describe('NAT port mapper with nat = "upnp" (SSDP)', () => {
  it('finds the gateway by an SSDP M-SEARCH and maps through it', async (t) => {
    const igd = await startIgdStub('203.0.113.9');
    t.after(() => igd.close());
    // A stub SSDP responder: joins 239.255.255.250 on port 1900 and answers every M-SEARCH with the stub's description URL.
    const searches: string[] = [];
    const ssdp = createSocket({ type: 'udp4', reuseAddr: true });
    ssdp.on('message', (message, from) => {
      const text = message.toString('latin1');
      if (!text.startsWith('M-SEARCH * HTTP/1.1')) return;
      searches.push(/^ST:\s*(\S+)/im.exec(text)?.[1] ?? '');
      ssdp.send(`HTTP/1.1 200 OK\r\nCACHE-CONTROL: max-age=120\r\nST: urn:schemas-upnp-org:device:InternetGatewayDevice:1\r\nLOCATION: ${igd.descriptionUrl}\r\n\r\n`, from.port, from.address);
    });
    try {
      await new Promise<void>((resolve, reject) => {
        ssdp.once('error', reject);
        ssdp.bind(1900, () => resolve());
      });
      ssdp.addMembership('239.255.255.250');
    } catch (error) {
      ssdp.close();
      t.skip(`no SSDP responder possible here (UDP 1900 or multicast membership): ${(error as Error).message}`);
      return;
    }
    t.after(() => ssdp.close());
    const { metrics } = recordingMetrics();
    const mapper = new PortMapper({
      mode: { kind: 'upnp', descriptionUrl: null }, leaseSeconds: 60, log: recordingLogger(), metrics, onAnnounce: () => undefined,
      ports: [{ purpose: 'discv5', protocol: 'udp', internalPort: 30_361 }],
    });
    mapper.start();
    await mapper.firstAttempt();
    assert.equal(mapper.status().state, 'mapped', JSON.stringify(mapper.status()));
    assert.equal(mapper.status().externalAddress, '203.0.113.9');
    assert.ok(searches.includes('urn:schemas-upnp-org:device:InternetGatewayDevice:1') && searches.includes('urn:schemas-upnp-org:device:InternetGatewayDevice:2'), searches.join(', '));
    assert.ok(igd.mappings.has('UDP/30361'));
    await mapper.stop();
    assert.equal(igd.mappings.size, 0);
  });
});

describe('UPnP device description and the default gateway', () => {
  it('finds the WAN connection service and resolves its control URL against URLBase', () => {
    const xml = `<root><URLBase>http://10.0.0.1:5000/</URLBase><device><serviceList>
      <service><serviceType>urn:schemas-upnp-org:service:Layer3Forwarding:1</serviceType><controlURL>/l3f</controlURL></service>
      <service><serviceType>urn:schemas-upnp-org:service:WANPPPConnection:1</serviceType><controlURL>/ppp</controlURL></service>
      <service><serviceType>urn:schemas-upnp-org:service:WANIPConnection:1</serviceType><controlURL>ctl/ip?x=1&amp;y=2</controlURL></service>
    </serviceList></device></root>`;
    assert.deepEqual(wanServiceOf(xml, 'http://10.0.0.1:5000/rootDesc.xml'), { serviceType: 'urn:schemas-upnp-org:service:WANIPConnection:1', controlUrl: 'http://10.0.0.1:5000/ctl/ip?x=1&y=2' });
    assert.equal(wanServiceOf('<root><device/></root>', 'http://10.0.0.1/'), null);
  });

  it('reads the default gateway from a Linux routing table', () => {
    const dir = mkdtempSync(join(tmpdir(), 'cdn-route-'));
    try {
      const file = join(dir, 'route');
      writeFileSync(file, 'Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n'
        + 'eth0\t0001A8C0\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0\n'
        + 'eth0\t00000000\t0101A8C0\t0003\t0\t0\t0\t00000000\t0\t0\t0\n');
      assert.equal(defaultGateway(file), '192.168.1.1');
      writeFileSync(file, 'Iface\tDestination\tGateway \tFlags\n');
      assert.equal(defaultGateway(file), null);
      assert.equal(defaultGateway(join(dir, 'missing')), null);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
