/**
 * The connection- and listing-level identity of a processor (status, capabilities, the SSE `hello` frame), as the
 * node serves it and publishes it to relays (docs/jetstream.md "Descriptors"). Declared here, below api/ and net/,
 * because both the API and a relay's JetStream reader speak it.
 */
export interface ProcessorDescriptor {
  readonly id: string;
  readonly instance: string;
  readonly kind: string;
  readonly version: string;
  readonly changeSchema: string;
  readonly genericApi: string;
  readonly deliveryOrdering: string;
  readonly output: 'entities' | 'none';
  readonly delivery: boolean;
}
