/**
 * Checks `x-node-consumer-credential` against a consumer's stored scrypt hash. A scrypt derivation
 * costs tens of milliseconds, so after one succeeds the listener keeps (in memory only) a SHA-256
 * of the accepted secret beside the record's salt; later calls compare against it in constant
 * time. A recreated consumer has a new salt, which voids the remembered entry.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { verifyCredential } from '../../../store/credential-hash.js';
import type { CredentialHash } from '../../../store/consumers.js';

const MAX_REMEMBERED = 10_000;

interface Remembered {
  readonly salt: Buffer;
  readonly digest: Buffer;
}

export class CredentialVerifier {
  private readonly remembered = new Map<string, Remembered>();

  async verify(key: string, presented: string, stored: CredentialHash): Promise<boolean> {
    const digest = sha256(presented);
    const known = this.remembered.get(key);
    if (known && known.salt.equals(stored.salt)) return timingSafeEqual(digest, known.digest);
    if (!(await verifyCredential(presented, stored))) return false;
    this.remember(key, presented, stored);
    return true;
  }

  /** Called after creating a consumer with this secret, so its first calls skip the derivation. */
  remember(key: string, secret: string, stored: CredentialHash): void {
    if (this.remembered.size >= MAX_REMEMBERED) this.remembered.delete(this.remembered.keys().next().value!);
    this.remembered.set(key, { salt: Buffer.from(stored.salt), digest: sha256(secret) });
  }

  forget(key: string): void {
    this.remembered.delete(key);
  }
}

function sha256(value: string): Buffer {
  return createHash('sha256').update(value.normalize('NFC'), 'utf8').digest();
}
