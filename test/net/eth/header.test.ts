import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { InvalidFieldError, RlpDecodeError } from '../../../net/eth/errors.js';
import { decodeHeader, encodeHeader, hashHeader, headerToRlp, type BlockHeader } from '../../../net/eth/header.js';
import { bigintToBytes, hexToBytes } from '../../../net/eth/hex.js';
import { encodeRlp, type RlpInput } from '../../../net/eth/rlp.js';
import { mainnetBlocks } from './fixtures.js';

/** Strips the fields of forks after `fieldCount`, giving each older header shape from a Prague header. */
function shape(header: BlockHeader, fieldCount: 15 | 16 | 17 | 20 | 21): BlockHeader {
  const copy: Partial<BlockHeader> = { ...header };
  const optional = ['baseFeePerGas', 'withdrawalsRoot', 'blobGasUsed', 'excessBlobGas', 'parentBeaconBlockRoot', 'requestsHash'] as const;
  optional.forEach((name, i) => {
    if (15 + i + 1 > fieldCount) delete copy[name];
  });
  return copy as BlockHeader;
}

function expectDecodeError(fields: RlpInput[], pattern: RegExp): void {
  assert.throws(() => decodeHeader(encodeRlp(fields)), (error: unknown) => error instanceof RlpDecodeError && error.name === 'RlpDecodeError' && pattern.test(error.message));
}

describe('block headers', () => {
  let prague: BlockHeader;
  before(() => {
    prague = decodeHeader(mainnetBlocks().find((f) => f.number === 22431084)!.header);
  });

  for (const count of [15, 16, 17, 20, 21] as const) {
    it(`a ${count}-field header encodes to ${count} RLP fields and decodes back`, () => {
      const header = shape(prague, count);
      assert.equal(headerToRlp(header).length, count);
      const decoded = decodeHeader(encodeHeader(header));
      assert.deepEqual(decoded, header);
      assert.equal(hashHeader(decoded), hashHeader(header));
    });
  }

  it('number and timestamp are numbers; quantities are bigints', () => {
    assert.equal(typeof prague.number, 'number');
    assert.equal(typeof prague.timestamp, 'number');
    for (const key of ['difficulty', 'gasLimit', 'gasUsed', 'baseFeePerGas', 'blobGasUsed', 'excessBlobGas'] as const) assert.equal(typeof prague[key], 'bigint', key);
  });

  it('encoding a later fork field without an earlier one names the missing field', () => {
    const gap: Partial<BlockHeader> = { ...prague };
    delete gap.parentBeaconBlockRoot;
    assert.throws(() => encodeHeader(gap as BlockHeader), (error: unknown) =>
      error instanceof InvalidFieldError && error.field === 'parentBeaconBlockRoot' && /missing while requestsHash is present/.test(error.message));
    const halfCancun = shape(prague, 17);
    halfCancun.blobGasUsed = 0n;
    assert.throws(() => encodeHeader(halfCancun), (error: unknown) => error instanceof InvalidFieldError && error.field === 'excessBlobGas');
  });

  it('encoding a wrong-length hash names the field', () => {
    assert.throws(() => encodeHeader({ ...prague, stateRoot: '0x1234' }), (error: unknown) =>
      error instanceof InvalidFieldError && error.field === 'stateRoot' && /expected 32 bytes, got 2/.test(error.message));
  });

  it('decoding rejects a field count no fork uses', () => {
    expectDecodeError(headerToRlp(prague).slice(0, 18), /expected 15, 16, 17, 20, 21 fields, got 18/);
  });

  it('decoding names a hash of the wrong length', () => {
    const fields = headerToRlp(prague);
    fields[0] = hexToBytes('0x00');
    expectDecodeError(fields, /field parentHash: expected 32 bytes, got 1/);
  });

  it('decoding rejects a non-canonical integer (leading zero byte)', () => {
    const fields = headerToRlp(prague);
    fields[10] = hexToBytes('0x0001');
    expectDecodeError(fields, /field gasUsed: non-canonical integer/);
  });

  it('decoding rejects a block number beyond Number.MAX_SAFE_INTEGER', () => {
    const fields = headerToRlp(prague);
    fields[8] = bigintToBytes(2n ** 53n);
    expectDecodeError(fields, /field number: 9007199254740992 exceeds Number.MAX_SAFE_INTEGER/);
  });

  it('decoding rejects a list where a hash belongs and malformed RLP', () => {
    const fields = headerToRlp(prague);
    fields[3] = [];
    expectDecodeError(fields, /field stateRoot: expected a byte string, got a list/);
    assert.throws(() => decodeHeader(hexToBytes('0xf9ffff')), RlpDecodeError);
    assert.throws(() => decodeHeader(hexToBytes('0x80')), /expected an RLP list/);
  });
});
