/**
 * `[sources.live] nat`: how the peer lane learns the address it announces, the forms geth's `--nat` takes:
 * `none`, `extip:<IPv4>` (a fixed address, no mapping), `upnp` (an Internet Gateway Device found by SSDP),
 * `upnp:<rootDesc URL>` (that device description, for gateways that do not answer SSDP), `pmp` (NAT-PMP to the
 * default gateway), `pmp:<gateway IPv4>`, and `any` (UPnP or NAT-PMP, whichever answers first).
 */

export type NatMode =
  | { readonly kind: 'none' }
  | { readonly kind: 'extip'; readonly ip: string }
  | { readonly kind: 'upnp'; readonly descriptionUrl: string | null }
  | { readonly kind: 'pmp'; readonly gateway: string | null }
  | { readonly kind: 'any' };

/** What the refusal of a bad value says is expected. */
export const NAT_FORMS = '"none", "extip:<IPv4>", "upnp", "upnp:<http URL of the gateway\'s rootDesc.xml>", "pmp", "pmp:<gateway IPv4>" or "any"';

/** The dotted IPv4 address `text` names (each octet 0–255, no leading zeros beyond one digit), or null. */
export function parseIpv4(text: string): string | null {
  const match = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(text);
  if (!match) return null;
  const octets = match.slice(1);
  if (octets.some((octet) => Number(octet) > 255 || (octet.length > 1 && octet.startsWith('0')))) return null;
  return octets.map(Number).join('.');
}

/** Reads a `nat` value; null when it is none of the accepted forms. */
export function parseNatMode(value: string): NatMode | null {
  if (value === 'none') return { kind: 'none' };
  if (value === 'upnp') return { kind: 'upnp', descriptionUrl: null };
  if (value === 'pmp') return { kind: 'pmp', gateway: null };
  if (value === 'any') return { kind: 'any' };
  const at = value.indexOf(':');
  if (at < 0) return null;
  const [scheme, rest] = [value.slice(0, at), value.slice(at + 1)];
  if (scheme === 'extip') {
    const ip = parseIpv4(rest);
    return ip === null ? null : { kind: 'extip', ip };
  }
  if (scheme === 'pmp') {
    const gateway = parseIpv4(rest);
    return gateway === null ? null : { kind: 'pmp', gateway };
  }
  if (scheme === 'upnp') {
    let url: URL;
    try {
      url = new URL(rest);
    } catch {
      return null;
    }
    if (url.protocol !== 'http:' || url.username !== '' || url.password !== '') return null;
    return { kind: 'upnp', descriptionUrl: url.href };
  }
  return null;
}

/** Whether the mode maps ports at a gateway (upnp, pmp, any). */
export function mapsPorts(mode: NatMode): mode is Extract<NatMode, { kind: 'upnp' | 'pmp' | 'any' }> {
  return mode.kind === 'upnp' || mode.kind === 'pmp' || mode.kind === 'any';
}
