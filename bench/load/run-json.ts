/**
 * Runs a load script to completion as a separate process and returns the JSON document it printed
 * as its last stdout line; a non-zero exit is an error carrying the script's stderr.
 */
import { exitOf, loadScript, spawnNodeScript, stopProcess } from './spawn.js';

export async function runJsonScript<T>(name: string, args: readonly string[], timeoutMs: number): Promise<T> {
  const child = spawnNodeScript(loadScript(name), args);
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => { stdout += chunk.toString('utf8'); });
  child.stderr!.on('data', (chunk: Buffer) => { stderr += chunk.toString('utf8'); });
  const timer = setTimeout(() => void stopProcess(child, 2000), timeoutMs);
  const code = await exitOf(child);
  clearTimeout(timer);
  if (code !== 0) throw new Error(`load script ${name} exited with ${code}: ${stderr.trim().slice(-2000)}`);
  const last = stdout.trim().split('\n').pop() ?? '';
  try {
    return JSON.parse(last) as T;
  } catch {
    throw new Error(`load script ${name} printed no JSON result: ${stdout.slice(-500)} ${stderr.slice(-500)}`);
  }
}
