/**
 * A baseline server run as a separate process: started, awaited until it prints its
 * `{"port": N}` line, and stopped by the caller.
 */
import { exitOf, loadScript, spawnNodeScript, stopProcess, tailOutput } from './spawn.js';

export interface ServerProcess {
  readonly baseUrl: string;
  readonly pid: number;
  stop(): Promise<void>;
}

export async function startServerProcess(name: string, args: readonly string[], timeoutMs = 20_000): Promise<ServerProcess> {
  const child = spawnNodeScript(loadScript(name), args);
  const output = tailOutput(child);
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name} did not report its port within ${timeoutMs} ms: ${output.join('\n')}`)), timeoutMs);
    let pending = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      const lines = (pending + chunk.toString('utf8')).split('\n');
      pending = lines.pop() ?? '';
      const announced = lines.map(portOf).find((found) => found !== undefined);
      if (announced !== undefined) {
        clearTimeout(timer);
        resolve(announced);
      }
    });
    void exitOf(child).then((code) => {
      clearTimeout(timer);
      reject(new Error(`${name} exited with ${code} before listening: ${output.join('\n')}`));
    });
  }).catch(async (error: unknown) => {
    await stopProcess(child, 2000);
    throw error;
  });
  return { baseUrl: `http://127.0.0.1:${port}`, pid: child.pid!, stop: () => stopProcess(child, 5000) };
}

function portOf(line: string): number | undefined {
  try {
    const parsed = JSON.parse(line) as { port?: unknown };
    return typeof parsed.port === 'number' ? parsed.port : undefined;
  } catch {
    return undefined;
  }
}
