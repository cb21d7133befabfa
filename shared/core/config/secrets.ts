// Secrets referenced by ARN: in AWS the stack never puts a secret value in an environment variable or the template;
// a function gets the secret's ARN and reads the value from Secrets Manager once, at cold start. A value given
// directly (SVC_JWT_SECRET, as `sam local` and the local server do) wins over its ARN.

/** Environment variable holding a secret's ARN → the config key it fills → the variable that gives it directly. */
export const SECRET_ARNS = [
  { arnVariable: 'SVC_JWT_SECRET_ARN', key: 'auth.jwt_secret', directVariable: 'SVC_JWT_SECRET' },
  { arnVariable: 'SVC_ENVSVC_TOKEN_ARN', key: 'envsvc.token', directVariable: 'SVC_ENVSVC_TOKEN' },
  {
    arnVariable: 'SVC_AUDIT_INGEST_TOKEN_ARN',
    key: 'audit.ingest_token',
    directVariable: 'SVC_AUDIT_INGEST_TOKEN',
  },
  {
    arnVariable: 'SVC_ALERTS_WEBHOOK_SECRET_ARN',
    key: 'alerts.webhook_secret',
    directVariable: 'SVC_ALERTS_WEBHOOK_SECRET',
  },
  {
    arnVariable: 'SVC_ADMIN_PASSWORD_ARN',
    key: 'bootstrap.admin_password',
    directVariable: 'SVC_ADMIN_PASSWORD',
  },
] as const;

export type SecretKey = (typeof SECRET_ARNS)[number]['key'];

/** Reads one secret's string value (the SDK is loaded only when a secret is referenced). */
export async function readSecret(arn: string): Promise<string> {
  const { SecretsManagerClient, GetSecretValueCommand } = await import('@aws-sdk/client-secrets-manager');
  const client = new SecretsManagerClient({});
  try {
    const { SecretString } = await client.send(new GetSecretValueCommand({ SecretId: arn }));
    if (!SecretString) throw new Error(`secret ${arn} has no string value`);
    return SecretString;
  } finally {
    client.destroy();
  }
}

/**
 * The secrets `env` references by ARN and does not give directly, read from Secrets Manager, as config key → value
 * (for loadConfig's `secrets`). Nothing is read when no ARN is set, so local runs never touch AWS.
 */
export async function resolveSecretArns(
  env: NodeJS.ProcessEnv,
  read: (arn: string) => Promise<string> = readSecret,
): Promise<Partial<Record<SecretKey, string>>> {
  const wanted = SECRET_ARNS.filter(
    ({ arnVariable, directVariable }) => env[arnVariable] && !env[directVariable],
  );
  const values = await Promise.all(wanted.map(({ arnVariable }) => read(env[arnVariable] as string)));
  return Object.fromEntries(wanted.map(({ key }, i) => [key, values[i]]));
}
