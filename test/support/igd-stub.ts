/**
 * A stub UPnP Internet Gateway Device on 127.0.0.1 for the NAT tests: serves a device description (IGD:1 with a
 * WANIPConnection:1 service whose control URL is relative, as miniupnpd's is) and a SOAP control URL that records
 * every action with its arguments, answers GetExternalIPAddress with `externalIp`, and, while `refuse` is set,
 * answers every action with a UPnP fault (501 Action Failed) the way a gateway that refuses does.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface SoapCall {
  readonly action: string;
  readonly args: Readonly<Record<string, string>>;
  readonly at: number;
}

export interface IgdStub {
  readonly descriptionUrl: string;
  readonly calls: SoapCall[];
  externalIp: string;
  refuse: boolean;
  /** Port mappings in place now, keyed `PROTOCOL/externalPort`. */
  readonly mappings: Map<string, Readonly<Record<string, string>>>;
  close(): Promise<void>;
}

const SERVICE = 'urn:schemas-upnp-org:service:WANIPConnection:1';

const DESCRIPTION = `<?xml version="1.0"?>
<root xmlns="urn:schemas-upnp-org:device-1-0">
  <specVersion><major>1</major><minor>0</minor></specVersion>
  <device>
    <deviceType>urn:schemas-upnp-org:device:InternetGatewayDevice:1</deviceType>
    <friendlyName>stub router</friendlyName>
    <UDN>uuid:00000000-0000-0000-0000-000000000001</UDN>
    <serviceList><service>
      <serviceType>urn:schemas-upnp-org:service:Layer3Forwarding:1</serviceType>
      <serviceId>urn:upnp-org:serviceId:L3Forwarding1</serviceId>
      <controlURL>/ctl/L3F</controlURL><eventSubURL>/evt/L3F</eventSubURL><SCPDURL>/L3F.xml</SCPDURL>
    </service></serviceList>
    <deviceList><device>
      <deviceType>urn:schemas-upnp-org:device:WANDevice:1</deviceType>
      <deviceList><device>
        <deviceType>urn:schemas-upnp-org:device:WANConnectionDevice:1</deviceType>
        <serviceList><service>
          <serviceType>${SERVICE}</serviceType>
          <serviceId>urn:upnp-org:serviceId:WANIPConn1</serviceId>
          <controlURL>/ctl/IPConn</controlURL><eventSubURL>/evt/IPConn</eventSubURL><SCPDURL>/WANIPCn.xml</SCPDURL>
        </service></serviceList>
      </device></deviceList>
    </device></deviceList>
  </device>
</root>`;

const envelope = (body: string) => `<?xml version="1.0"?>\r\n<s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/" s:encodingStyle="http://schemas.xmlsoap.org/soap/encoding/"><s:Body>${body}</s:Body></s:Envelope>`;

const FAULT = envelope('<s:Fault><faultcode>s:Client</faultcode><faultstring>UPnPError</faultstring><detail><UPnPError xmlns="urn:schemas-upnp-org:control-1-0"><errorCode>501</errorCode><errorDescription>Action Failed</errorDescription></UPnPError></detail></s:Fault>');

export async function startIgdStub(externalIp = '203.0.113.9'): Promise<IgdStub> {
  const calls: SoapCall[] = [];
  const mappings = new Map<string, Readonly<Record<string, string>>>();
  const stub = { calls, externalIp, refuse: false, mappings } as Omit<IgdStub, 'descriptionUrl' | 'close'> & { externalIp: string; refuse: boolean };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (req.method === 'GET' && req.url === '/rootDesc.xml') {
        res.writeHead(200, { 'content-type': 'text/xml' }).end(DESCRIPTION);
        return;
      }
      if (req.method !== 'POST' || req.url !== '/ctl/IPConn') {
        res.writeHead(404).end();
        return;
      }
      const soapAction = /#(\w+)"?$/.exec(String(req.headers.soapaction ?? ''))?.[1] ?? '';
      const body = Buffer.concat(chunks).toString('utf8');
      const inner = new RegExp(`<u:${soapAction}[^>]*>([\\s\\S]*)</u:${soapAction}>`).exec(body)?.[1] ?? '';
      const args = Object.fromEntries([...inner.matchAll(/<(\w+)>([^<]*)<\/\1>/g)].map((m) => [m[1]!, m[2]!]));
      calls.push({ action: soapAction, args, at: Date.now() });
      if (stub.refuse) {
        res.writeHead(500, { 'content-type': 'text/xml; charset="utf-8"' }).end(FAULT);
        return;
      }
      let answer = '';
      if (soapAction === 'GetExternalIPAddress') answer = `<NewExternalIPAddress>${stub.externalIp}</NewExternalIPAddress>`;
      else if (soapAction === 'AddPortMapping') mappings.set(`${args.NewProtocol}/${args.NewExternalPort}`, args);
      else if (soapAction === 'DeletePortMapping') mappings.delete(`${args.NewProtocol}/${args.NewExternalPort}`);
      else {
        res.writeHead(500, { 'content-type': 'text/xml' }).end(FAULT);
        return;
      }
      res.writeHead(200, { 'content-type': 'text/xml; charset="utf-8"' }).end(envelope(`<u:${soapAction}Response xmlns:u="${SERVICE}">${answer}</u:${soapAction}Response>`));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return Object.assign(stub, {
    descriptionUrl: `http://127.0.0.1:${port}/rootDesc.xml`,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  });
}
