// The event archive (events.archive.target = "s3"; shared/observability/archive/archive.ts): the bucket its function writes
// each closed hour of events to as Parquet, and the Glue database and table through which Athena queries it. The
// table uses partition projection (dt, hour computed from the query's predicates), so no crawler runs and no
// partition is ever added.
import { type CfnElement, Duration, type RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import * as glue from 'aws-cdk-lib/aws-glue';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as s3 from 'aws-cdk-lib/aws-s3';
import type { Construct } from 'constructs';
import { ARCHIVE_COLUMNS, GLUE_TYPES } from '#shared/observability/archive/parquet.ts';
import { FlatConstruct } from './flat-construct.ts';

/** The archive's objects, under events.archive.prefix (shared/observability/archive/store.ts, hourDirectory). */
export const ARCHIVE_TABLE = 'events';

export interface EventArchiveProps {
  /** events.archive.prefix. */
  prefix: string;
  /** The archive function's role: it may put and get objects under the prefix. */
  writer: iam.IRole;
  /** The archive function: it is given the bucket's name (SVC_ARCHIVE_BUCKET). */
  writerFunction: { addEnvironment(key: string, value: string): unknown };
  /** Functions that say where the archive is (archive_location): given the bucket's name, and no access to it. */
  readerFunctions: ReadonlyArray<{ addEnvironment(key: string, value: string): unknown }>;
  /** Days until the objects move to S3 Intelligent-Tiering, then to Glacier Instant Retrieval. */
  intelligentTieringAfterDays: number;
  glacierInstantRetrievalAfterDays: number;
  /** The oldest day Athena's projection offers (yyyy-MM-dd): the archive's start. */
  firstDay: string;
  removalPolicy: RemovalPolicy;
}

export class EventArchive extends FlatConstruct {
  readonly bucket: s3.Bucket;
  readonly database: glue.CfnDatabase;
  readonly table: glue.CfnTable;
  readonly databaseName: string;

  constructor(scope: Construct, id: string, props: EventArchiveProps) {
    super(scope, id);
    // Created in `scope` (see flat-construct.ts).
    this.bucket = new s3.Bucket(scope, 'EventArchiveBucket', {
      // SSE-S3: Athena and the function read it with their IAM permissions alone, no key policy to keep in step.
      encryption: s3.BucketEncryption.S3_MANAGED,
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      enforceSSL: true,
      // Off: an hour is rewritten on purpose (a rerun, late events) and the newest copy is the archive; versions would
      // keep every superseded copy. Aurora keeps a day until the archive holds all of it, so nothing needs a version.
      versioned: false,
      lifecycleRules: [
        {
          id: 'cheaper-storage-with-age',
          transitions: [
            {
              storageClass: s3.StorageClass.INTELLIGENT_TIERING,
              transitionAfter: Duration.days(props.intelligentTieringAfterDays),
            },
            {
              // Still read in milliseconds, so Athena queries it like any object.
              storageClass: s3.StorageClass.GLACIER_INSTANT_RETRIEVAL,
              transitionAfter: Duration.days(props.glacierInstantRetrievalAfterDays),
            },
          ],
        },
      ],
      removalPolicy: props.removalPolicy,
    });
    Validations.of(this.bucket).acknowledge({
      id: 'AwsSolutions-S1',
      reason:
        'Only the archive function writes the bucket (its role, under the prefix); reads are Athena queries, which Athena and CloudTrail record. Server access logs would need a second bucket for no question they answer.',
    });

    // Put and get of the archive's objects, nothing else (no list, no delete: keys are computed, objects overwritten).
    const objectKeys = `${props.prefix ? `${props.prefix}/` : ''}${ARCHIVE_TABLE}/*`;
    const objects = this.bucket.arnForObjects(objectKeys);
    const policy = new iam.Policy(scope, 'EventArchiveWriterPolicy', {
      statements: [
        new iam.PolicyStatement({ actions: ['s3:PutObject', 's3:GetObject'], resources: [objects] }),
      ],
      roles: [props.writer],
    });
    const bucketId = Stack.of(scope).getLogicalId(this.bucket.node.defaultChild as CfnElement);
    Validations.of(policy).acknowledge({
      // cdk-nag names the wildcard resource in the finding.
      id: `AwsSolutions-IAM5[Resource::<${bucketId}.Arn>/${objectKeys}]`,
      reason:
        'The archive writes one object per hour (and its manifest) under its prefix: the keys are not known ahead, so the resource is the prefix, and the actions are PutObject and GetObject only.',
    });
    for (const fn of [props.writerFunction, ...props.readerFunctions]) {
      fn.addEnvironment('SVC_ARCHIVE_BUCKET', this.bucket.bucketName);
    }

    const stack = Stack.of(scope);
    this.databaseName = 'agent_control_plane_archive';
    this.database = new glue.CfnDatabase(scope, 'EventArchiveDatabase', {
      catalogId: stack.account,
      databaseInput: {
        name: this.databaseName,
        description: 'The event archive (Parquet, Hive-partitioned by dt and hour)',
      },
    });
    const location = `s3://${this.bucket.bucketName}/${props.prefix ? `${props.prefix}/` : ''}${ARCHIVE_TABLE}/`;
    this.table = new glue.CfnTable(scope, 'EventArchiveTable', {
      catalogId: stack.account,
      databaseName: this.databaseName,
      tableInput: {
        name: ARCHIVE_TABLE,
        description: 'Observability events, one Parquet file per closed hour (manifest.json beside it)',
        tableType: 'EXTERNAL_TABLE',
        parameters: {
          classification: 'parquet',
          EXTERNAL: 'TRUE',
          'projection.enabled': 'true',
          'projection.dt.type': 'date',
          'projection.dt.format': 'yyyy-MM-dd',
          'projection.dt.range': `${props.firstDay},NOW`,
          'projection.dt.interval': '1',
          'projection.dt.interval.unit': 'DAYS',
          'projection.hour.type': 'integer',
          'projection.hour.range': '0,23',
          'projection.hour.digits': '2',
          'storage.location.template': `${location}dt=\${dt}/hour=\${hour}/`,
        },
        partitionKeys: [
          { name: 'dt', type: 'string' },
          { name: 'hour', type: 'int' },
        ],
        storageDescriptor: {
          location,
          columns: ARCHIVE_COLUMNS.map((c) => ({ name: c.name, type: GLUE_TYPES[c.kind] })),
          inputFormat: 'org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat',
          outputFormat: 'org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat',
          serdeInfo: {
            serializationLibrary: 'org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe',
          },
        },
      },
    });
    this.table.addDependency(this.database);
  }
}
