import { createCipheriv, createDecipheriv, randomBytes, scryptSync } from 'node:crypto';
import { FusionError } from '../core/errors';

const VERSION = 'v1';
const KDF_SALT = 'fusion-proxy/job-encryption/v1';

/**
 * AES-256-GCM for job payloads, because BullMQ stores job data in clear in Redis. The key is
 * JOB_ENCRYPTION_KEY (32 bytes, hex or base64) or derived from PROXY_PASSWORD with scrypt, so
 * api and workers that share the password share the key without another secret to deploy.
 */
export class JobCrypto {
  private constructor(private readonly key: Buffer) {}

  static fromKey(encoded: string): JobCrypto {
    const key = /^[0-9a-fA-F]{64}$/.test(encoded) ? Buffer.from(encoded, 'hex') : Buffer.from(encoded, 'base64');
    if (key.length !== 32) {
      throw new FusionError('CONFIG_INVALID', 'JOB_ENCRYPTION_KEY must be 32 bytes, as 64 hex digits or base64');
    }
    return new JobCrypto(key);
  }

  static fromPassword(password: string): JobCrypto {
    // N=2^15 costs ~50 ms once at boot and makes offline guessing of a weak password expensive.
    return new JobCrypto(scryptSync(password, KDF_SALT, 32, { N: 2 ** 15, r: 8, p: 1, maxmem: 64 * 1024 * 1024 }));
  }

  encrypt(plain: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return `${VERSION}.${iv.toString('base64')}.${cipher.getAuthTag().toString('base64')}.${body.toString('base64')}`;
  }

  decrypt(sealed: string): string {
    const [version, iv, tag, body] = sealed.split('.');
    if (version !== VERSION || !iv || !tag || body === undefined) {
      throw new FusionError('PROXY_SERVER_ERROR', 'job payload is not in the expected encrypted format');
    }
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64'));
      decipher.setAuthTag(Buffer.from(tag, 'base64'));
      return Buffer.concat([decipher.update(Buffer.from(body, 'base64')), decipher.final()]).toString('utf8');
    } catch {
      throw new FusionError(
        'PROXY_SERVER_ERROR',
        'cannot decrypt the job: api and worker use different JOB_ENCRYPTION_KEY or PROXY_PASSWORD values',
      );
    }
  }
}
