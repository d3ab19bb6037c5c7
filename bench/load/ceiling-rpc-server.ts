/**
 * `node ceiling-rpc-server.js --rpc-url U --body JSON`: the JSON-RPC ceiling. Asks the node once for
 * its answer to `--body`, then serves exactly those bytes to every POST on a bare uWebSockets.js
 * listener (the node's own HTTP library): it reads the request body, since the node must, and does
 * nothing else — no parsing, no store read, no envelope. Its throughput is the most this machine's
 * loopback allows for an answer of that size with this load generator, so the node's figure can be
 * read as a fraction of it.
 */
import { parseArgs } from 'node:util';
import uWS from 'uWebSockets.js';

const { values } = parseArgs({ options: { 'rpc-url': { type: 'string' }, body: { type: 'string' } } });
if (!values['rpc-url'] || !values.body) throw new Error('ceiling-rpc-server needs --rpc-url and --body');
const response = await fetch(values['rpc-url'], { method: 'POST', headers: { 'content-type': 'application/json' }, body: values.body });
if (response.status !== 200) throw new Error(`the node answered ${response.status}`);
const answer = Buffer.from(await response.arrayBuffer());

const app = uWS.App();
app.post('/*', (res) => {
  let aborted = false;
  res.onAborted(() => { aborted = true; });
  res.onData((_chunk, isLast) => {
    if (!isLast || aborted) return;
    res.cork(() => {
      res.writeStatus('200 OK').writeHeader('content-type', 'application/json').end(answer);
    });
  });
});
app.listen('127.0.0.1', 0, (socket) => {
  if (socket === false) throw new Error('ceiling-rpc-server cannot listen');
  process.stdout.write(`${JSON.stringify({ port: uWS.us_socket_local_port(socket as unknown as uWS.us_socket) })}\n`);
  process.once('SIGTERM', () => {
    uWS.us_listen_socket_close(socket);
    (app as uWS.TemplatedApp & { close(): void }).close();
    process.exit(0);
  });
});
