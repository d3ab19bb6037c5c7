/**
 * Polls a synchronous probe until it yields a value (anything truthy) and returns that value; throws naming `what`
 * when `timeoutMs` passes first. The bound only catches a hang: a test waits for its condition, never for a time.
 */
export async function until<T>(what: string, probe: () => T | undefined | null | false, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
