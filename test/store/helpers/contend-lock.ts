/**
 * Child process for the lock contention test: waits for a shared start time, tries to take the
 * lock and prints "won" or "refused". A winner holds the lock until its stdin closes, so every
 * other contender meets it alive, then releases it.
 */
import { acquireDataDirLock, DataDirLockedError } from '../../../store/lock.js';

const [dataDir, startAtText] = process.argv.slice(2);
if (!dataDir || !startAtText) throw new Error('usage: contend-lock <dataDir> <startAtMs>');
while (Date.now() < Number(startAtText)) {
  // Spin rather than sleep so every contender starts within the same millisecond.
}
try {
  const lock = acquireDataDirLock(dataDir, 'contender');
  process.stdout.write('won\n');
  process.stdin.resume();
  process.stdin.on('end', () => lock.release());
} catch (error) {
  if (!(error instanceof DataDirLockedError)) throw error;
  process.stdout.write('refused\n');
  process.exit(0);
}
