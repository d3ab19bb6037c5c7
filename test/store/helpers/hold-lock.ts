/** Child process for the lock tests: takes the data-directory lock, reports, and holds it until killed. */
import { acquireDataDirLock } from '../../../store/lock.js';

const [dataDir, holder = 'node'] = process.argv.slice(2);
if (!dataDir) throw new Error('usage: hold-lock <dataDir> [holder]');
const lock = acquireDataDirLock(dataDir, holder);
process.stdout.write(`${JSON.stringify({ pid: process.pid, holder: lock.holder.holder })}\n`);
setInterval(() => {}, 60_000);
