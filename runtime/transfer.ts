/**
 * Buffers handed between threads instead of copied (postMessage / piscina transfer lists): a view names the whole
 * ArrayBuffer under it, which is detached on the sending side once sent. Shared memory is never transferred.
 */
export function buffersOf(views: readonly ArrayBufferView[]): ArrayBuffer[] {
  const buffers = new Set<ArrayBuffer>();
  for (const view of views) if (view.buffer instanceof ArrayBuffer) buffers.add(view.buffer);
  return [...buffers];
}
