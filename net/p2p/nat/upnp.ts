/**
 * UPnP Internet Gateway Device client, the part geth's `--nat upnp` uses: the gateway found by an SSDP M-SEARCH
 * (or given by the URL of its device description), its WAN connection service (WANIPConnection:2, :1 or
 * WANPPPConnection:1) and three SOAP actions: GetExternalIPAddress, AddPortMapping, DeletePortMapping.
 * The internal client of a mapping is this host's address on the connection to the gateway.
 */
import { createSocket } from 'node:dgram';
import { request } from 'node:http';
import { GatewayError, withSignal, type MappingGranted, type MappingProtocol, type NatGateway } from './gateway.js';
import { parseIpv4 } from './mode.js';

const SSDP_ADDRESS = '239.255.255.250';
const SSDP_PORT = 1900;
const SEARCH_TARGETS = ['urn:schemas-upnp-org:device:InternetGatewayDevice:2', 'urn:schemas-upnp-org:device:InternetGatewayDevice:1'];
/** The WAN connection services that carry the port-mapping actions, preferred first. */
const WAN_SERVICES = ['urn:schemas-upnp-org:service:WANIPConnection:2', 'urn:schemas-upnp-org:service:WANIPConnection:1', 'urn:schemas-upnp-org:service:WANPPPConnection:1'];
/** Description and SOAP answers larger than this are refused (a gateway's are a few KiB). */
const MAX_BODY_BYTES = 256 * 1024;
const HTTP_TIMEOUT_MS = 5000;
const DESCRIPTION = 'chain-data-node';

/** UPnP error codes the mapper reacts to (UPnP-gw-WANIPConnection-v2 §2.5). */
export const UPNP_CONFLICT_IN_MAPPING = 718;
export const UPNP_ONLY_PERMANENT_LEASES = 725;

interface HttpAnswer {
  readonly status: number;
  readonly body: string;
  readonly localAddress: string;
}

function httpRequest(url: string, init: { method: 'GET' | 'POST'; headers?: Record<string, string>; body?: string }, signal: AbortSignal): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: init.method, headers: { ...init.headers, ...(init.body !== undefined ? { 'content-length': Buffer.byteLength(init.body) } : {}) }, signal, timeout: HTTP_TIMEOUT_MS }, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > MAX_BODY_BYTES) {
          req.destroy(new GatewayError(`the gateway's answer is larger than ${MAX_BODY_BYTES} bytes`));
          return;
        }
        chunks.push(chunk);
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8'), localAddress: res.socket?.localAddress ?? req.socket?.localAddress ?? '' }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new GatewayError(`no answer from the gateway within ${HTTP_TIMEOUT_MS} ms`)));
    req.on('error', reject);
    req.end(init.body);
  });
}

const ENTITIES: Readonly<Record<string, string>> = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" };

function decodeText(text: string): string {
  return text.trim().replace(/&(lt|gt|amp|quot|apos|#\d+|#x[0-9a-fA-F]+);/g, (_, name: string) =>
    name.startsWith('#x') ? String.fromCodePoint(parseInt(name.slice(2), 16)) : name.startsWith('#') ? String.fromCodePoint(Number(name.slice(1))) : ENTITIES[name]!);
}

/** The inner XML of every element named `name` (any namespace prefix), in document order. */
export function xmlElements(xml: string, name: string): string[] {
  const pattern = new RegExp(`<(?:[\\w.-]+:)?${name}(?:\\s[^>]*)?>([\\s\\S]*?)</(?:[\\w.-]+:)?${name}\\s*>`, 'g');
  return [...xml.matchAll(pattern)].map((match) => match[1]!);
}

export function xmlText(xml: string, name: string): string | null {
  const inner = xmlElements(xml, name)[0];
  return inner === undefined ? null : decodeText(inner);
}

/** The WAN connection service of a device description: its type and absolute control URL; null when it has none. */
export function wanServiceOf(descriptionXml: string, location: string): { serviceType: string; controlUrl: string } | null {
  const base = xmlText(descriptionXml, 'URLBase') || location;
  const services = xmlElements(descriptionXml, 'service').map((service) => ({ type: xmlText(service, 'serviceType'), control: xmlText(service, 'controlURL') }));
  for (const wanted of WAN_SERVICES) {
    const service = services.find((s) => s.type === wanted && s.control);
    if (service) return { serviceType: wanted, controlUrl: new URL(service.control!, base).href };
  }
  return null;
}

export class UpnpGateway implements NatGateway {
  readonly protocol = 'upnp' as const;

  private constructor(readonly controlUrl: string, readonly serviceType: string, readonly internalAddress: string) {}

  /** Reads the device description at `location` and finds its WAN connection service. */
  static async fromDescription(location: string, signal: AbortSignal): Promise<UpnpGateway> {
    const answer = await httpRequest(location, { method: 'GET' }, signal);
    if (answer.status !== 200) throw new GatewayError(`the gateway's device description answered HTTP ${answer.status}`);
    const service = wanServiceOf(answer.body, location);
    if (!service) throw new GatewayError(`the device description names no WAN connection service (${WAN_SERVICES.map((s) => s.split(':').slice(-2).join(':')).join(', ')})`);
    const internal = parseIpv4(answer.localAddress.replace(/^::ffff:/, ''));
    if (!internal) throw new GatewayError(`the gateway is not reached over IPv4 (local address ${answer.localAddress || 'unknown'})`);
    return new UpnpGateway(service.controlUrl, service.serviceType, internal);
  }

  async externalIp(signal: AbortSignal): Promise<string> {
    const body = await this.soap('GetExternalIPAddress', [], signal);
    const ip = parseIpv4(xmlText(body, 'NewExternalIPAddress') ?? '');
    if (!ip || ip === '0.0.0.0') throw new GatewayError(`the gateway reports no usable external IPv4 address (${JSON.stringify((xmlText(body, 'NewExternalIPAddress') ?? '').slice(0, 40))})`);
    return ip;
  }

  async addMapping(protocol: MappingProtocol, internalPort: number, externalPort: number, leaseSeconds: number, signal: AbortSignal): Promise<MappingGranted> {
    await this.soap('AddPortMapping', [
      ['NewRemoteHost', ''], ['NewExternalPort', String(externalPort)], ['NewProtocol', protocol.toUpperCase()], ['NewInternalPort', String(internalPort)],
      ['NewInternalClient', this.internalAddress], ['NewEnabled', '1'], ['NewPortMappingDescription', DESCRIPTION], ['NewLeaseDuration', String(leaseSeconds)],
    ], signal);
    return { externalPort, leaseSeconds };
  }

  async deleteMapping(protocol: MappingProtocol, _internalPort: number, externalPort: number, signal: AbortSignal): Promise<void> {
    await this.soap('DeletePortMapping', [['NewRemoteHost', ''], ['NewExternalPort', String(externalPort)], ['NewProtocol', protocol.toUpperCase()]], signal);
  }

  private async soap(action: string, args: readonly (readonly [string, string])[], signal: AbortSignal): Promise<string> {
    const body = '<?xml version="1.0"?>\r\n<s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/" s:encodingStyle="http://schemas.xmlsoap.org/soap/encoding/">'
      + `<s:Body><u:${action} xmlns:u="${this.serviceType}">${args.map(([name, value]) => `<${name}>${value}</${name}>`).join('')}</u:${action}></s:Body></s:Envelope>`;
    const answer = await httpRequest(this.controlUrl, {
      method: 'POST', headers: { 'content-type': 'text/xml; charset="utf-8"', soapaction: `"${this.serviceType}#${action}"` }, body,
    }, signal);
    if (answer.status === 200) return answer.body;
    const code = Number(xmlText(answer.body, 'errorCode') ?? NaN);
    const description = (xmlText(answer.body, 'errorDescription') ?? '').slice(0, 80);
    throw new GatewayError(`${action} refused: HTTP ${answer.status}${Number.isFinite(code) ? `, UPnP error ${code}` : ''}${description ? ` (${description})` : ''}`, Number.isFinite(code) ? code : null);
  }
}

/**
 * Searches the local network for an Internet Gateway Device by SSDP (M-SEARCH to 239.255.255.250:1900, sent twice)
 * and returns the first that answers with a usable WAN connection service.
 */
export async function discoverUpnpGateway(signal: AbortSignal, waitMs = 3000): Promise<UpnpGateway> {
  const socket = createSocket({ type: 'udp4', reuseAddr: true });
  const locations: string[] = [];
  let wake: (() => void) | null = null;
  socket.on('message', (message) => {
    const location = /^location:\s*(\S+)\s*$/im.exec(message.toString('latin1'))?.[1];
    if (location && /^http:\/\//i.test(location) && !locations.includes(location)) {
      locations.push(location);
      wake?.();
    }
  });
  socket.on('error', () => undefined);
  try {
    await new Promise<void>((resolve, reject) => {
      socket.once('error', reject);
      socket.bind(0, () => resolve());
    });
    const search = () => {
      for (const target of SEARCH_TARGETS) {
        const message = `M-SEARCH * HTTP/1.1\r\nHOST: ${SSDP_ADDRESS}:${SSDP_PORT}\r\nST: ${target}\r\nMAN: "ssdp:discover"\r\nMX: 2\r\n\r\n`;
        socket.send(message, SSDP_PORT, SSDP_ADDRESS);
      }
    };
    search();
    const again = setTimeout(search, Math.floor(waitMs / 3));
    const deadline = Date.now() + waitMs;
    const errors: string[] = [];
    try {
      for (let tried = 0; ; ) {
        while (tried < locations.length) {
          try {
            return await UpnpGateway.fromDescription(locations[tried++]!, signal);
          } catch (error) {
            if (signal.aborted) throw error;
            errors.push((error as Error).message);
          }
        }
        const left = deadline - Date.now();
        if (left <= 0) break;
        await withSignal(new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, left);
          wake = () => { clearTimeout(timer); resolve(); };
        }), signal);
        wake = null;
      }
    } finally {
      clearTimeout(again);
    }
    throw new GatewayError(locations.length === 0
      ? `no UPnP Internet Gateway Device answered the SSDP search within ${waitMs} ms`
      : `no usable UPnP gateway among ${locations.length} that answered: ${errors[0] ?? ''}`.slice(0, 200));
  } finally {
    socket.close();
  }
}
