/**
 * `node autocannon-run.js --url U --server-pid P --connections C --duration S [--pipelining N] [--body JSON]`:
 * one autocannon run against one URL (a POST of `--body` as `application/json` when given, else GETs),
 * in its own process so the load generator never shares an event loop with the measured server.
 * Prints autocannon's result as one JSON line, plus the cores the server and this process kept busy
 * during the run (`serverCpuCores`, `loadGeneratorCpuCores`).
 */
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { startCpuMeter } from './process-cpu.js';

const { values } = parseArgs({
  options: {
    url: { type: 'string' }, 'server-pid': { type: 'string' }, connections: { type: 'string', default: '50' }, duration: { type: 'string', default: '10' },
    pipelining: { type: 'string', default: '1' }, body: { type: 'string' },
  },
});
if (!values.url || !values['server-pid']) throw new Error('autocannon-run needs --url and --server-pid');

const post = values.body === undefined ? {} : { method: 'POST' as const, body: values.body, headers: { 'content-type': 'application/json' } };
const serverCpu = startCpuMeter(Number(values['server-pid']));
const ownCpu = startCpuMeter(null);
const result = await autocannon({ url: values.url, ...post, connections: Number(values.connections), duration: Number(values.duration), pipelining: Number(values.pipelining) });
process.stdout.write(`${JSON.stringify({ ...result, serverCpuCores: serverCpu(), loadGeneratorCpuCores: ownCpu() })}\n`);
