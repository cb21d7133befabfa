// Alarms and the CloudWatch dashboard: 5xx rate of the API, Lambda throttles, p99 duration of the events route,
// dead-letter queue depth, health-probe failures. Alarms notify one SNS topic (encrypted with its own key).
import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import type * as apigwv2 from 'aws-cdk-lib/aws-apigatewayv2';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as actions from 'aws-cdk-lib/aws-cloudwatch-actions';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as sns from 'aws-cdk-lib/aws-sns';
import * as subscriptions from 'aws-cdk-lib/aws-sns-subscriptions';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';

const FIVE_MINUTES = Duration.minutes(5);
/** CloudWatch alarms take at most 10 metrics in one math expression. */
const METRICS_PER_EXPRESSION = 10;
/** Below this many requests in 5 minutes a few errors are not a rate worth waking someone for. */
export const MIN_REQUESTS_FOR_ERROR_RATE = 20;
export const SERVER_ERROR_RATE_PERCENT = 5;

export interface MonitoredFunction {
  name: string;
  fn: lambda.IFunction;
}

export interface MonitoringProps {
  stage: apigwv2.HttpStage;
  functions: MonitoredFunction[];
  /** The function behind POST /v1/devices/events, when the route table has that route. */
  eventsFunction?: lambda.IFunction;
  eventsP99Ms: number;
  /** The export delivery function, when exports are on: alarms when a destination's lag passes the threshold. */
  exportLag?: { namespace: string; metricName: string; thresholdSeconds: number };
  /** The health probe function and how often it runs. */
  probe?: { fn: lambda.IFunction; everyMs: number };
  deadLetterQueues: Array<{ name: string; queue: sqs.IQueue }>;
  alarmEmail?: string;
  removalPolicy: RemovalPolicy;
}

export class Monitoring extends Construct {
  readonly topic: sns.Topic;
  readonly dashboard: cloudwatch.Dashboard;
  readonly alarms: cloudwatch.Alarm[] = [];

  constructor(scope: Construct, id: string, props: MonitoringProps) {
    super(scope, id);

    const key = new kms.Key(this, 'AlarmTopicKey', {
      description: 'Encrypts the alarm notifications topic',
      enableKeyRotation: true,
      removalPolicy: props.removalPolicy,
      ...(props.removalPolicy === RemovalPolicy.DESTROY ? { pendingWindow: Duration.days(7) } : {}),
    });
    // CloudWatch publishes to an encrypted topic only if it may use the key.
    key.grant(new iam.ServicePrincipal('cloudwatch.amazonaws.com'), 'kms:Decrypt', 'kms:GenerateDataKey*');
    this.topic = new sns.Topic(this, 'AlarmTopic', { masterKey: key, enforceSSL: true });
    if (props.alarmEmail) this.topic.addSubscription(new subscriptions.EmailSubscription(props.alarmEmail));
    const notify = new actions.SnsAction(this.topic);
    const alarm = (alarmId: string, alarmProps: cloudwatch.AlarmProps) => {
      const created = new cloudwatch.Alarm(this, alarmId, alarmProps);
      created.addAlarmAction(notify);
      created.addOkAction(notify);
      this.alarms.push(created);
      return created;
    };

    const requests = props.stage.metricCount({ period: FIVE_MINUTES, statistic: 'Sum' });
    const serverErrors = props.stage.metricServerError({ period: FIVE_MINUTES, statistic: 'Sum' });
    const clientErrors = props.stage.metricClientError({ period: FIVE_MINUTES, statistic: 'Sum' });
    const serverErrorRate = new cloudwatch.MathExpression({
      expression: `IF(requests >= ${MIN_REQUESTS_FOR_ERROR_RATE}, 100 * errors / requests, 0)`,
      usingMetrics: { requests, errors: serverErrors },
      period: FIVE_MINUTES,
      label: '5xx rate (%)',
    });
    alarm('ServerErrorRate', {
      alarmDescription: `More than ${SERVER_ERROR_RATE_PERCENT}% of API requests answered 5xx (in 2 of 3 five-minute periods with at least ${MIN_REQUESTS_FOR_ERROR_RATE} requests)`,
      metric: serverErrorRate,
      threshold: SERVER_ERROR_RATE_PERCENT,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 3,
      datapointsToAlarm: 2,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });

    const throttleMetrics = props.functions.map(({ name, fn }) =>
      fn.metricThrottles({ period: FIVE_MINUTES, statistic: 'Sum', label: name }),
    );
    for (let i = 0; i < throttleMetrics.length; i += METRICS_PER_EXPRESSION) {
      const chunk = throttleMetrics.slice(i, i + METRICS_PER_EXPRESSION);
      const usingMetrics = Object.fromEntries(chunk.map((metric, j) => [`t${j}`, metric]));
      alarm(i === 0 ? 'Throttles' : `Throttles${i / METRICS_PER_EXPRESSION + 1}`, {
        alarmDescription: 'Lambda throttled invocations of this service (concurrency limit reached)',
        metric: new cloudwatch.MathExpression({
          expression: `SUM([${Object.keys(usingMetrics).join(',')}])`,
          usingMetrics,
          period: FIVE_MINUTES,
          label: 'throttles',
        }),
        threshold: 1,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      });
    }

    let eventsP99: cloudwatch.IMetric | undefined;
    if (props.eventsFunction) {
      eventsP99 = props.eventsFunction.metricDuration({
        period: FIVE_MINUTES,
        statistic: 'p99',
        label: 'POST /v1/devices/events p99',
      });
      alarm('EventsLatencyP99', {
        alarmDescription: `p99 duration of POST /v1/devices/events above ${props.eventsP99Ms} ms for 15 minutes`,
        metric: eventsP99,
        threshold: props.eventsP99Ms,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: 3,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      });
    }

    for (const { name, queue } of props.deadLetterQueues) {
      alarm(`${name}DeadLetters`, {
        alarmDescription: `Scheduled invocations of ${name} gave up and are waiting in its dead-letter queue`,
        metric: queue.metricApproximateNumberOfMessagesVisible({
          period: FIVE_MINUTES,
          statistic: 'Maximum',
        }),
        threshold: 1,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      });
    }

    let probeErrors: cloudwatch.IMetric | undefined;
    if (props.probe) {
      // One period spans at least one probe run (alarm periods are whole minutes, at most a day).
      const minutes = Math.min(24 * 60, Math.max(5, Math.ceil(props.probe.everyMs / 60_000)));
      probeErrors = props.probe.fn.metricErrors({
        period: Duration.minutes(minutes),
        statistic: 'Sum',
        label: 'probe failures',
      });
      alarm('ProbeFailures', {
        alarmDescription:
          'The background health probe failed (database unavailable or the probe itself broke)',
        metric: probeErrors,
        threshold: 1,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      });
    }

    let exportLag: cloudwatch.IMetric | undefined;
    if (props.exportLag) {
      const { namespace, metricName, thresholdSeconds } = props.exportLag;
      exportLag = new cloudwatch.Metric({
        namespace,
        metricName,
        period: FIVE_MINUTES,
        statistic: 'Maximum',
        label: 'oldest undelivered record (s)',
      });
      // Missing data is a pass that did not run or found no enabled destination: the dead-letter alarm covers the first.
      alarm('ExportLag', {
        alarmDescription: `An export destination's oldest undelivered record (a tool call, or a change of a class stream it takes) is older than ${thresholdSeconds} s (destination down or too slow; GET /v1/admin/exports/destinations/{id} says which stream)`,
        metric: exportLag,
        threshold: thresholdSeconds,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: 3,
        datapointsToAlarm: 2,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      });
    }

    this.dashboard = new cloudwatch.Dashboard(this, 'Dashboard', {
      defaultInterval: Duration.hours(3),
    });
    const perFunction = (metric: (fn: lambda.IFunction, label: string) => cloudwatch.IMetric) =>
      props.functions.map(({ name, fn }) => metric(fn, name));
    this.dashboard.addWidgets(
      new cloudwatch.AlarmStatusWidget({ title: 'Alarms', alarms: this.alarms, width: 24, height: 4 }),
    );
    this.dashboard.addWidgets(
      new cloudwatch.GraphWidget({
        title: 'API requests and errors (per 5 minutes)',
        left: [requests.with({ label: 'requests' })],
        right: [serverErrors.with({ label: '5xx' }), clientErrors.with({ label: '4xx' })],
        width: 12,
      }),
      new cloudwatch.GraphWidget({
        title: 'API latency (ms) and 5xx rate (%)',
        left: [
          props.stage.metricLatency({ period: FIVE_MINUTES, statistic: 'p50', label: 'p50' }),
          props.stage.metricLatency({ period: FIVE_MINUTES, statistic: 'p99', label: 'p99' }),
          ...(eventsP99 ? [eventsP99] : []),
        ],
        right: [serverErrorRate],
        width: 12,
      }),
    );
    this.dashboard.addWidgets(
      new cloudwatch.GraphWidget({
        title: 'Function errors',
        left: perFunction((fn, label) => fn.metricErrors({ period: FIVE_MINUTES, statistic: 'Sum', label })),
        width: 8,
      }),
      new cloudwatch.GraphWidget({
        title: 'Function throttles',
        left: throttleMetrics,
        width: 8,
      }),
      new cloudwatch.GraphWidget({
        title: 'Function duration p99 (ms)',
        left: perFunction((fn, label) =>
          fn.metricDuration({ period: FIVE_MINUTES, statistic: 'p99', label }),
        ),
        width: 8,
      }),
    );
    this.dashboard.addWidgets(
      new cloudwatch.GraphWidget({
        title: 'Dead-letter queues (messages)',
        left: props.deadLetterQueues.map(({ name, queue }) =>
          queue.metricApproximateNumberOfMessagesVisible({
            period: FIVE_MINUTES,
            statistic: 'Maximum',
            label: name,
          }),
        ),
        width: 12,
      }),
      new cloudwatch.GraphWidget({
        title: 'Export lag (s)',
        left: exportLag ? [exportLag] : [],
        width: 12,
      }),
      new cloudwatch.GraphWidget({
        title: 'Health probe',
        left: props.probe
          ? [
              props.probe.fn.metricInvocations({ period: FIVE_MINUTES, statistic: 'Sum', label: 'runs' }),
              props.probe.fn.metricErrors({ period: FIVE_MINUTES, statistic: 'Sum', label: 'failures' }),
            ]
          : [],
        width: 12,
      }),
    );
  }
}
