/** Types for snappyjs 0.7 (it ships none): the raw snappy block format devp2p v5 frames use. */
declare module 'snappyjs' {
  export function compress(input: Uint8Array): Uint8Array;
  export function uncompress(input: Uint8Array, maxLength?: number): Uint8Array;
}
