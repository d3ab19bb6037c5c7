/**
 * A copy of a base64url token with one bit of its last byte flipped: always a different, still
 * canonical token, so a checksum-carrying token (cursor, page token) becomes damaged for certain.
 * (Overwriting the last characters with fixed ones leaves the token unchanged when it happens to
 * end in them.)
 */
export function damagedToken(token: string): string {
  const bytes = Buffer.from(token, 'base64url');
  bytes[bytes.length - 1]! ^= 1;
  return bytes.toString('base64url');
}
