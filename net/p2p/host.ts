/**
 * An RLPx host speaking eth/69 and eth/68: dials peers by enode, accepts inbound connections when given a listen
 * port, runs the status handshake on every new connection and hands established sessions to its owner. Sessions
 * that fail the handshake are counted by reason and closed. The node key is the caller's (the stored
 * `execution-p2p-secret` for the node, a seed-derived key for the devnet peer).
 */
import { EventEmitter } from 'node:events';
import { Common, Mainnet } from '@ethereumjs/common';
import { DISCONNECT_REASON, DisconnectReasonNames, RLPx, type Peer } from '@ethereumjs/devp2p';
import { ETH68_CAPABILITY, ETH69_CAPABILITY, EthWireProtocol } from './eth-protocol.js';
import { EthSession, SessionError, type EthRequestHandler } from './session.js';
import type { BlockRange, EthStatus } from './eth-messages.js';
import type { Enode } from './enode.js';
import { nodeIdOf } from './enode.js';
import { installRlpxFastPath } from './rlpx-fast-path.js';

installRlpxFastPath();

export interface HostOptions {
  readonly privateKey: Uint8Array;
  /** Local status (without version; the session fills it in). */
  readonly status: () => Omit<EthStatus, 'version'>;
  /** Returns why a remote status is refused, or null to accept (network id, genesis, fork id). */
  readonly checkStatus: (remote: EthStatus) => string | null;
  readonly handler: EthRequestHandler | null;
  readonly maxPeers: number;
  readonly handshakeTimeoutMs: number;
  /** TCP listener (host, port); null: dial only. */
  readonly listen: { readonly host: string; readonly port: number } | null;
  readonly clientId?: string;
  /** Versions offered, highest shared wins (default both). */
  readonly versions?: readonly (68 | 69)[];
}

export interface HostEvents {
  session: [session: EthSession];
  'session:closed': [session: EthSession, reason: string];
  'handshake:failed': [reason: string];
  error: [error: Error];
}

export class EthHost extends EventEmitter<HostEvents> {
  readonly id: Uint8Array;
  private readonly rlpx: RLPx;
  private readonly sessions = new Set<EthSession>();
  private destroyed = false;
  private listening: Promise<number> | null = null;

  constructor(private readonly options: HostOptions) {
    super();
    this.id = nodeIdOf(options.privateKey);
    const versions = options.versions ?? [69, 68];
    const capabilities = [ETH69_CAPABILITY, ETH68_CAPABILITY].filter((c) => versions.includes(c.version as 68 | 69));
    this.rlpx = new RLPx(options.privateKey, {
      capabilities,
      common: new Common({ chain: Mainnet }),
      maxPeers: options.maxPeers,
      timeout: options.handshakeTimeoutMs,
      listenPort: options.listen?.port ?? null,
      clientId: new TextEncoder().encode(options.clientId ?? 'chain-data-node/v0.1.0'),
    });
    this.rlpx.events.on('peer:added', (peer) => this.onPeer(peer));
    this.rlpx.events.on('peer:removed', (peer, reason) => this.onRemoved(peer, reason));
    this.rlpx.events.on('peer:error', () => undefined);
    this.rlpx.events.on('error', (error) => this.emit('error', error));
    if (options.listen) {
      const { host, port } = options.listen;
      const server = (this.rlpx as unknown as { _server: import('node:net').Server })._server;
      this.listening = new Promise((resolve, reject) => {
        server.once('error', reject);
        server.once('listening', () => resolve((server.address() as import('node:net').AddressInfo).port));
      });
      this.rlpx.listen(port, host);
    }
  }

  /** The bound TCP port (after `listen`), e.g. when 0 asked for a free one. */
  async port(): Promise<number> {
    if (!this.listening) throw new Error('this host does not listen');
    return this.listening;
  }

  /** Dials a peer; the session (if the handshake succeeds) arrives as a `session` event. Rejects on connect failure. */
  async dial(enode: Enode): Promise<void> {
    await this.rlpx.connect({ id: enode.id, address: enode.host, tcpPort: enode.tcpPort, udpPort: enode.udpPort });
  }

  /** Announces a new served range to every eth/69 session (BlockRangeUpdate). */
  broadcastRange(range: BlockRange): void {
    for (const session of this.sessions) session.announceRange(range);
  }

  get sessionCount(): number {
    return this.sessions.size;
  }

  /**
   * Whether RLPx holds this peer: connecting, in its handshake, or in session. `getPeers()` lists only peers past
   * their hello, so a dial loop that checked it alone dialled a peer again mid-handshake and devp2p refused the second
   * dial ("Already connected"); devp2p's own check is its `_peers` map, which holds the socket from the connect on.
   */
  isConnected(id: Uint8Array): boolean {
    const held = (this.rlpx as unknown as { _peers?: unknown })._peers;
    if (held instanceof Map) return held.has(Buffer.from(id).toString('hex'));
    return this.rlpx.getPeers().some((peer) => {
      const peerId = peer.getId();
      return peerId !== null && Buffer.from(peerId).equals(Buffer.from(id));
    });
  }

  destroy(): void {
    if (this.destroyed) return;
    this.destroyed = true;
    for (const session of this.sessions) session.disconnect(DISCONNECT_REASON.CLIENT_QUITTING);
    this.rlpx.destroy();
  }

  private onPeer(peer: Peer): void {
    const protocol = (peer.getProtocols() as unknown[]).find((p): p is EthWireProtocol => p instanceof EthWireProtocol);
    if (!protocol) {
      peer.disconnect(DISCONNECT_REASON.USELESS_PEER);
      return;
    }
    // Requests and answers are small frames that wait on each other: without TCP_NODELAY, Nagle's algorithm holds a
    // frame until the previous one is acknowledged, and the peer's delayed ACK (40 ms on Linux) stalls every round
    // trip of the follower's header → body → receipt steps. devp2p's sockets keep the default.
    (peer as unknown as { _socket?: import('node:net').Socket })._socket?.setNoDelay(true);
    const session = new EthSession(peer, protocol, this.options.handler);
    session.handshake({ ...this.options.status(), version: protocol.version }, this.options.handshakeTimeoutMs, this.options.checkStatus).then(() => {
      if (this.destroyed || session.isClosed) return;
      this.sessions.add(session);
      this.emit('session', session);
    }, (error: unknown) => {
      const reason = error instanceof SessionError ? `${error.reason}: ${error.message}` : String(error);
      this.emit('handshake:failed', reason);
      if (!session.isClosed) session.disconnect(DISCONNECT_REASON.SUBPROTOCOL_ERROR);
    });
  }

  private onRemoved(peer: Peer, reason: unknown): void {
    for (const session of this.sessions) {
      if (session.peer !== peer) continue;
      this.sessions.delete(session);
      const name = typeof reason === 'number' && Object.hasOwn(DisconnectReasonNames, reason) ? DisconnectReasonNames[reason as DISCONNECT_REASON] : 'unknown';
      this.emit('session:closed', session, name);
    }
  }
}
