// What signs the audit anchors: in AWS the stack's KMS key (ECC_NIST_P256, SIGN_VERIFY: the private key never
// leaves KMS), locally a PKCS#8 PEM file generated on first use into the data directory (owner-only, never
// committed). Both sign ECDSA P-256 over SHA-256, so one check (anchor.ts) verifies either.
import { createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject, sign } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { AnchorSigner } from './anchor.ts';

/** The file the local key is in: audit.anchors.key_file, or <data_dir>/audit-anchor-key.pem. */
export const localKeyFile = (keyFile: string, dataDir: string) =>
  keyFile || join(dataDir, 'audit-anchor-key.pem');

/** The key in `file`, generated there (mode 0600) when there is none yet. */
export function localKeySigner(file: string): AnchorSigner {
  let privateKey: KeyObject;
  try {
    privateKey = createPrivateKey(readFileSync(file, 'utf8'));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    const pair = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    try {
      // wx: two first runs racing keep the key written first.
      writeFileSync(file, pair.privateKey.export({ type: 'pkcs8', format: 'pem' }), {
        flag: 'wx',
        mode: 0o600,
      });
      chmodSync(file, 0o600);
    } catch (raced) {
      if ((raced as NodeJS.ErrnoException).code !== 'EEXIST') throw raced;
    }
    privateKey = createPrivateKey(readFileSync(file, 'utf8'));
  }
  if (privateKey.asymmetricKeyType !== 'ec' || privateKey.asymmetricKeyDetails?.namedCurve !== 'prime256v1') {
    throw new Error(`audit.anchors.key_file: ${file} is not an ECDSA P-256 private key`);
  }
  const publicDer = createPublicKey(privateKey).export({ type: 'spki', format: 'der' });
  return {
    publicKey: async () => publicDer,
    sign: async (message) => sign('sha256', message, privateKey),
  };
}

/** The KMS key `keyId` (its client loaded only here). */
export async function kmsSigner(keyId: string, endpoint?: string): Promise<AnchorSigner> {
  const { GetPublicKeyCommand, KMSClient, SignCommand } = await import('@aws-sdk/client-kms');
  const client = new KMSClient(endpoint ? { endpoint } : {});
  let publicDer: Promise<Uint8Array> | undefined;
  return {
    publicKey: () => {
      publicDer ??= client.send(new GetPublicKeyCommand({ KeyId: keyId })).then((out) => {
        if (!out.PublicKey) throw new Error(`KMS key ${keyId} gave no public key`);
        return out.PublicKey;
      });
      return publicDer;
    },
    sign: async (message) => {
      const out = await client.send(
        new SignCommand({
          KeyId: keyId,
          Message: message,
          MessageType: 'RAW',
          SigningAlgorithm: 'ECDSA_SHA_256',
        }),
      );
      if (!out.Signature) throw new Error(`KMS key ${keyId} gave no signature`);
      return out.Signature;
    },
  };
}
