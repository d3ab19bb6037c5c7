/** Free loopback ports for the servers a test starts; the bench harness owns the one implementation. */
export { freePort, freeUdpPort } from '../../bench/node.js';
