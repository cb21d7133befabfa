// A real S3 API on a free port (s3rver, objects under a temporary directory) for the real @aws-sdk/client-s3: the
// event archive's S3 store is tested against it.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import S3rver from 's3rver';
import { useAwsKeys } from './aws-keys.ts';

export interface S3Server {
  endpoint: string;
  bucket: string;
  close(): Promise<void>;
}

/**
 * `port` and `directory` let a test stop the server and start it again where it was (an outage): a directory given
 * is kept on close.
 */
export async function startS3Server(
  bucket = 'events-archive',
  options: { port?: number; directory?: string } = {},
): Promise<S3Server> {
  const directory = options.directory ?? mkdtempSync(join(tmpdir(), 'acp-s3rver-'));
  // s3rver checks signatures with its own fixed key pair: the clients of this process sign with it until close().
  const restoreKeys = useAwsKeys('S3RVER', 'S3RVER');
  const server = new S3rver({
    address: '127.0.0.1',
    port: options.port ?? 0,
    silent: true,
    directory,
    configureBuckets: [{ name: bucket }],
  });
  const address = await server.run();
  return {
    endpoint: `http://127.0.0.1:${address.port}`,
    bucket,
    close: async () => {
      await server.close();
      if (!options.directory) rmSync(directory, { recursive: true, force: true });
      restoreKeys();
    },
  };
}
