/**
 * `node autocannon-post-run.js --url U --body JSON --server-pid P --connections C --duration S`: one
 * autocannon run POSTing one JSON body (a JSON-RPC request), in its own process. Prints autocannon's
 * result as one JSON line with the cores the server and this process kept busy. (autocannon does not
 * hand out bodies cheaply: the workload checks the answer's bytes before and after the run.)
 */
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { startCpuMeter } from './process-cpu.js';

const { values } = parseArgs({
  options: {
    url: { type: 'string' }, body: { type: 'string' }, 'server-pid': { type: 'string' }, connections: { type: 'string', default: '50' },
    duration: { type: 'string', default: '10' },
  },
});
if (!values.url || !values.body || !values['server-pid']) throw new Error('autocannon-post-run needs --url, --body and --server-pid');

const serverCpu = startCpuMeter(Number(values['server-pid']));
const ownCpu = startCpuMeter(null);
const result = await autocannon({
  url: values.url, method: 'POST', body: values.body, headers: { 'content-type': 'application/json' },
  connections: Number(values.connections), duration: Number(values.duration), pipelining: 1,
});
process.stdout.write(`${JSON.stringify({ ...result, serverCpuCores: serverCpu(), loadGeneratorCpuCores: ownCpu() })}\n`);
