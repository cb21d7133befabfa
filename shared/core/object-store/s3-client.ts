// An S3 client for a bucket in AWS, or in an S3-compatible server (s3rver locally and in the tests) when an endpoint
// is given. Imported only by the functions that write to S3, so no other bundle carries the client.
import { S3Client } from '@aws-sdk/client-s3';

export function s3ClientFor(options: { region?: string; endpoint?: string }): S3Client {
  const region = options.region || process.env.AWS_REGION || 'us-east-1';
  return new S3Client(
    options.endpoint
      ? {
          region,
          endpoint: options.endpoint,
          // Local S3-compatible servers take the bucket in the path and predate S3's default checksums.
          forcePathStyle: true,
          requestChecksumCalculation: 'WHEN_REQUIRED',
          responseChecksumValidation: 'WHEN_REQUIRED',
        }
      : { region },
  );
}
