/** The block's RLP size (what BlobsBlock.size reports) is computed by the processor lane for every kind. */
export { blockRlpSize } from '../../processor/block-rlp-size.js';
