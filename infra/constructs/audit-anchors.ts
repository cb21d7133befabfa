// Where the audit chain's anchors live in AWS (audit.anchors.target = "s3"; shared/audit/anchors.ts): a bucket with
// Object Lock in compliance mode, so that no one (the service, an admin, the account's root) can change or delete
// an anchor before its retention ends, and the asymmetric KMS key that signs them (ECC_NIST_P256: the private key
// never leaves KMS; an auditor checks with the public key the anchor function publishes under <prefix>/keys/).
import { type CfnElement, Duration, type RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as s3 from 'aws-cdk-lib/aws-s3';
import type { Construct } from 'constructs';
import { FlatConstruct } from './flat-construct.ts';

type EnvironmentTarget = {
  addEnvironment(key: string, value: string): unknown;
  role?: iam.IRole | undefined;
};

export interface AuditAnchorsProps {
  /** audit.anchors.prefix. */
  prefix: string;
  /** audit.anchors.retention_days: the default Object Lock retention of each object. */
  retentionDays: number;
  /** The anchor function: signs with the key, puts and gets under the prefix, lists it. */
  writer: EnvironmentTarget;
  /** The verify function: gets and lists under the prefix. */
  readers: readonly EnvironmentTarget[];
  removalPolicy: RemovalPolicy;
}

export class AuditAnchors extends FlatConstruct {
  readonly bucket: s3.Bucket;
  readonly key: kms.Key;

  constructor(scope: Construct, id: string, props: AuditAnchorsProps) {
    super(scope, id);
    this.bucket = new s3.Bucket(scope, 'AuditAnchorBucket', {
      encryption: s3.BucketEncryption.S3_MANAGED,
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      enforceSSL: true,
      // Object Lock needs versions; compliance mode: no one shortens the retention or deletes a locked version.
      versioned: true,
      objectLockEnabled: true,
      objectLockDefaultRetention: s3.ObjectLockRetention.compliance(Duration.days(props.retentionDays)),
      removalPolicy: props.removalPolicy,
    });
    Validations.of(this.bucket).acknowledge({
      id: 'AwsSolutions-S1',
      reason:
        'Only the anchor function writes the bucket, and Object Lock (compliance) keeps every version: server access logs would need a second bucket for no question they answer.',
    });
    this.key = new kms.Key(scope, 'AuditAnchorKey', {
      description: "Signs the audit chain's anchors (ECDSA P-256)",
      keySpec: kms.KeySpec.ECC_NIST_P256,
      keyUsage: kms.KeyUsage.SIGN_VERIFY,
      removalPolicy: props.removalPolicy,
    });

    const prefix = props.prefix ? `${props.prefix}/` : '';
    const objects = this.bucket.arnForObjects(`${prefix}*`);
    const bucketId = Stack.of(scope).getLogicalId(this.bucket.node.defaultChild as CfnElement);
    const policy = (
      name: string,
      fns: readonly EnvironmentTarget[],
      actions: string[],
      extra: iam.PolicyStatement[],
    ) => {
      const created = new iam.Policy(scope, name, {
        statements: [
          new iam.PolicyStatement({ actions, resources: [objects] }),
          new iam.PolicyStatement({
            actions: ['s3:ListBucket'],
            resources: [this.bucket.bucketArn],
            conditions: { StringLike: { 's3:prefix': [`${prefix}*`] } },
          }),
          ...extra,
        ],
        roles: fns.flatMap((fn) => fn.role ?? []),
      });
      Validations.of(created).acknowledge({
        id: `AwsSolutions-IAM5[Resource::<${bucketId}.Arn>/${prefix}*]`,
        reason:
          'One object per anchor (its seq in the key) and one per public key, under the prefix: the keys are not known ahead, so the resource is the prefix.',
      });
      for (const fn of fns) fn.addEnvironment('SVC_AUDIT_ANCHOR_BUCKET', this.bucket.bucketName);
    };
    policy(
      'AuditAnchorWriterPolicy',
      [props.writer],
      ['s3:PutObject', 's3:GetObject'],
      [new iam.PolicyStatement({ actions: ['kms:Sign', 'kms:GetPublicKey'], resources: [this.key.keyArn] })],
    );
    props.writer.addEnvironment('SVC_AUDIT_ANCHOR_KMS_KEY', this.key.keyArn);
    if (props.readers.length > 0) policy('AuditAnchorReaderPolicy', props.readers, ['s3:GetObject'], []);
  }
}
