// Secrets referenced by ARN (what the stack gives a function) are read once each, only when referenced and not given
// directly; the real Secrets Manager client is exercised by test/infra/bundles.test.ts against a local endpoint.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { resolveSecretArns } from '#shared/core/config/secrets.ts';

const JWT_ARN = 'arn:aws:secretsmanager:us-east-1:123456789012:secret:jwt-AbCdEf';
const TOKEN_ARN = 'arn:aws:secretsmanager:us-east-1:123456789012:secret:envsvc-AbCdEf';
const values: Record<string, string> = { [JWT_ARN]: 'jwt-value', [TOKEN_ARN]: 'token-value' };

function recordingReader() {
  const asked: string[] = [];
  const read = async (arn: string) => {
    asked.push(arn);
    const value = values[arn];
    if (value === undefined) throw new Error(`ResourceNotFoundException: ${arn}`);
    return value;
  };
  return { asked, read };
}

test('no ARN in the environment: nothing is read (local runs never touch AWS)', async () => {
  const { asked, read } = recordingReader();
  assert.deepEqual(await resolveSecretArns({ SVC_JWT_SECRET: 'direct' }, read), {});
  assert.deepEqual(asked, []);
});

test('each referenced secret fills its config key', async () => {
  const { asked, read } = recordingReader();
  const secrets = await resolveSecretArns(
    { SVC_JWT_SECRET_ARN: JWT_ARN, SVC_ENVSVC_TOKEN_ARN: TOKEN_ARN },
    read,
  );
  assert.deepEqual(secrets, { 'auth.jwt_secret': 'jwt-value', 'envsvc.token': 'token-value' });
  assert.deepEqual(asked.sort(), [JWT_ARN, TOKEN_ARN].sort());
});

test('a value given directly wins and its ARN is not read', async () => {
  const { asked, read } = recordingReader();
  const secrets = await resolveSecretArns({ SVC_JWT_SECRET_ARN: JWT_ARN, SVC_JWT_SECRET: 'direct' }, read);
  assert.deepEqual(secrets, {});
  assert.deepEqual(asked, []);
});

test('a secret that cannot be read fails the start (the next invocation tries again)', async () => {
  const { read } = recordingReader();
  await assert.rejects(
    resolveSecretArns({ SVC_JWT_SECRET_ARN: `${JWT_ARN}-missing` }, read),
    /ResourceNotFoundException/,
  );
});
