/** What the port mapper needs of a gateway, whichever protocol (UPnP IGD or NAT-PMP) reached it. */

export type MappingProtocol = 'tcp' | 'udp';

export interface MappingGranted {
  readonly externalPort: number;
  /** The lease the gateway granted, in seconds (0: a permanent mapping, renewed anyway). */
  readonly leaseSeconds: number;
}

export interface NatGateway {
  readonly protocol: 'upnp' | 'pmp';
  /** This host's address on the gateway's network: the internal client of the mappings. */
  readonly internalAddress: string;
  externalIp(signal: AbortSignal): Promise<string>;
  addMapping(protocol: MappingProtocol, internalPort: number, externalPort: number, leaseSeconds: number, signal: AbortSignal): Promise<MappingGranted>;
  deleteMapping(protocol: MappingProtocol, internalPort: number, externalPort: number, signal: AbortSignal): Promise<void>;
}

/** A gateway's refusal (a UPnP SOAP fault or a NAT-PMP result code): the lane retries later. */
export class GatewayError extends Error {
  constructor(message: string, readonly code: number | null = null) {
    super(message);
    this.name = 'GatewayError';
  }
}

/** Rejects with `signal`'s reason once it aborts; otherwise settles as `work` does. */
export function withSignal<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason as Error);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason as Error);
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(
      (value) => { signal.removeEventListener('abort', onAbort); resolve(value); },
      (error: unknown) => { signal.removeEventListener('abort', onAbort); reject(error as Error); },
    );
  });
}
