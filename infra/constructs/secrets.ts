// The service's own secrets, generated in Secrets Manager: the JWT signing secret, the first admin's password (local
// auth), the environment service's token (envsvc.provider = "http") and the log shipper's audit ingest token. The
// functions get their ARNs, never their values, and read them at cold start.
import { type RemovalPolicy, Validations } from 'aws-cdk-lib';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import type { Construct } from 'constructs';
import { FlatConstruct } from './flat-construct.ts';

export interface AppSecretsProps {
  /** envsvc.provider = "http": a placeholder for the token the external environment service issues. */
  environmentServiceToken: boolean;
  /** auth.provider = "local": the password of the first admin, whom the deploy-time migration creates. */
  initialAdminPassword: boolean;
  removalPolicy: RemovalPolicy;
}

export class AppSecrets extends FlatConstruct {
  /** HS256 signing secret of local auth and CLI sign-in tokens (auth.jwt_secret). */
  readonly jwtSecret: secretsmanager.Secret;
  /** The external environment service's bearer token (envsvc.token), with envsvc.provider = "http" only. */
  readonly envServiceToken: secretsmanager.Secret | undefined;
  /** The log shipper's token for POST /v1/admin/audit-logs (audit.ingest_token). */
  readonly auditIngestToken: secretsmanager.Secret;
  /** The first admin's password, with auth.provider = "local" only. */
  readonly initialAdminPassword: secretsmanager.Secret | undefined;

  constructor(scope: Construct, id: string, props: AppSecretsProps) {
    super(scope, id);
    // Created in `scope`, with the ids the deployed stack has (see flat-construct.ts).
    const generated = (secretId: string, description: string, passwordLength: number) =>
      new secretsmanager.Secret(scope, secretId, {
        description,
        generateSecretString: { passwordLength, excludePunctuation: true, includeSpace: false },
        removalPolicy: props.removalPolicy,
      });

    this.jwtSecret = generated(
      'JwtSecret',
      'HS256 signing secret of local auth and CLI sign-in tokens (auth.jwt_secret)',
      64,
    );
    // Only with an external environment service: its bearer token, which that service issues. Generated here as a
    // placeholder, so that the secret exists before the first deploy; put the real token with put-secret-value. With
    // the builtin provider nothing calls an environment service and there is no token.
    this.envServiceToken = props.environmentServiceToken
      ? generated(
          'EnvServiceToken',
          'Bearer token for the external environment service (envsvc); put the token it issued with put-secret-value',
          48,
        )
      : undefined;
    // Only the ingest function can read it, and no other route accepts it, so the shipper needs no admin account.
    // Hand its value to the shipper.
    this.auditIngestToken = generated(
      'AuditIngestToken',
      "The log shipper's bearer token for POST /v1/admin/audit-logs (audit.ingest_token); that route only",
      48,
    );
    // Read by the migration function, which creates the first admin once, if no such user exists.
    this.initialAdminPassword = props.initialAdminPassword
      ? generated(
          'InitialAdminPassword',
          'Password of the first admin (bootstrap.admin_email), set when the deploy-time migration creates it; ' +
            'change it after the first sign-in',
          32,
        )
      : undefined;

    for (const secret of this.all) {
      Validations.of(secret).acknowledge({
        id: 'AwsSolutions-SMG4',
        reason:
          'Application secret without a rotation Lambda: rotating the JWT secret signs every user out, the ' +
          'environment-service token is issued by that service, the initial admin password is used once and the ' +
          'audit ingest token is shared with the log shipper; they ' +
          'are rotated by runbook (put-secret-value, then a deploy or cold start picks the new value up).',
      });
    }
  }

  /** Every secret this deployment has. */
  get all(): secretsmanager.Secret[] {
    return [this.jwtSecret, this.auditIngestToken, this.envServiceToken, this.initialAdminPassword].filter(
      (secret) => secret !== undefined,
    );
  }
}
