// The AWS key pair the SDK clients of this process sign with, set for a test and put back after it: local S3 and
// other AWS-compatible servers check signatures with fixed keys of their own.

/** Sets the key pair; the function returned restores what was there (or unsets it). */
export function useAwsKeys(id: string, secret: string): () => void {
  const saved = {
    AWS_ACCESS_KEY_ID: process.env.AWS_ACCESS_KEY_ID,
    AWS_SECRET_ACCESS_KEY: process.env.AWS_SECRET_ACCESS_KEY,
  };
  process.env.AWS_ACCESS_KEY_ID = id;
  process.env.AWS_SECRET_ACCESS_KEY = secret;
  return () => {
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  };
}
