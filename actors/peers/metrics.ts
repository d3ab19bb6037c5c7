/** The `node_p2p_` metrics of the peer lane, declared in one place; labels are bounded sets (no peer identities). */
import { Counter, Gauge, type Registry } from 'prom-client';

export interface P2pMetrics {
  readonly sessions: Gauge;
  readonly sessionsEstablished: Counter<'version'>;
  readonly disconnects: Counter<'reason'>;
  readonly handshakeFailures: Counter<'reason'>;
  readonly requests: Counter<'lane' | 'outcome' | 'purpose'>;
  readonly bytes: Counter;
  readonly bans: Counter;
  readonly qualifications: Counter<'outcome'>;
  readonly supervisorState: Gauge<'state'>;
  readonly blocksRecorded: Counter;
  readonly head: Gauge;
  readonly observedHead: Gauge;
  readonly messages: Counter<'kind'>;
  /** The NAT port mapper (net/p2p/nat/): 1 while every port is mapped, failures by stage, renewals. */
  readonly nat: { readonly mapped: Gauge; readonly failures: Counter<'stage'>; readonly renewals: Counter };
}

export function createP2pMetrics(registry: Registry): P2pMetrics {
  const registers = [registry];
  return {
    sessions: new Gauge({ name: 'node_p2p_sessions', help: 'Qualified eth sessions connected now', registers }),
    sessionsEstablished: new Counter({ name: 'node_p2p_sessions_established_total', help: 'eth sessions that completed the status handshake, by eth version', labelNames: ['version'], registers }),
    disconnects: new Counter({ name: 'node_p2p_disconnects_total', help: 'eth sessions closed, by devp2p disconnect reason', labelNames: ['reason'], registers }),
    handshakeFailures: new Counter({ name: 'node_p2p_handshake_failures_total', help: 'Connections refused at the status handshake, by cause', labelNames: ['reason'], registers }),
    requests: new Counter({ name: 'node_p2p_requests_total', help: 'Material requests, by lane (headers, bodies, receipts), outcome and purpose (live: the head; history: the p2p history source)', labelNames: ['lane', 'outcome', 'purpose'], registers }),
    bytes: new Counter({ name: 'node_p2p_received_bytes_total', help: 'Bytes of material answers received', registers }),
    bans: new Counter({ name: 'node_p2p_bans_total', help: 'Peers banned for cryptographically invalid material', registers }),
    qualifications: new Counter({ name: 'node_p2p_qualifications_total', help: 'Session qualifications against the verified execution anchor, by outcome', labelNames: ['outcome'], registers }),
    supervisorState: new Gauge({ name: 'node_p2p_supervisor_state', help: 'Network supervisor state (1 for the current one)', labelNames: ['state'], registers }),
    blocksRecorded: new Counter({ name: 'node_p2p_blocks_recorded_total', help: 'Verified blocks recorded from peers', registers }),
    head: new Gauge({ name: 'node_p2p_head_number', help: 'Number of the newest verified block recorded from peers', registers }),
    observedHead: new Gauge({ name: 'node_p2p_observed_head_number', help: 'Highest block number the qualified peers announced or served', registers }),
    messages: new Counter({ name: 'node_p2p_messages_dropped_total', help: 'Peer messages dropped, by kind (malformed, oversized, unknown)', labelNames: ['kind'], registers }),
    nat: {
      mapped: new Gauge({ name: 'node_p2p_nat_mapped', help: 'NAT port mapping (sources.live.nat upnp/pmp/any): 1 while every port of the lane is mapped at the gateway, else 0', registers }),
      failures: new Counter({ name: 'node_p2p_nat_mapping_failures_total', help: 'NAT port mapping attempts that failed, by stage (discover, external_ip, map, renew, unmap)', labelNames: ['stage'], registers }),
      renewals: new Counter({ name: 'node_p2p_nat_renewals_total', help: 'NAT port mappings renewed before their lease ended', registers }),
    },
  };
}
