// Fleet alerts in AWS (docs/policy.md, "EventBridge"): an event bus of their own that the alerts function puts each new
// alert on, a rule that keeps every alert event in a log group (other rules on the bus route them to a SIEM, a queue,
// a chatbot), and, with webhooks configured, the signing secret of the webhooks, generated in Secrets Manager.
import { type RemovalPolicy, Validations } from 'aws-cdk-lib';
import * as events from 'aws-cdk-lib/aws-events';
import * as iam from 'aws-cdk-lib/aws-iam';
import type { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import type { Construct } from 'constructs';
import { ALERT_DETAIL_TYPE, ALERT_EVENT_SOURCE } from '#shared/alerts/events.ts';
import { FlatConstruct } from './flat-construct.ts';

export interface AlertEventsProps {
  /** The function of the alerts schedule (alerts/derive): it puts the events and signs the webhooks. */
  alertsFunction: NodejsFunction;
  webhooks: boolean;
  logRetention: logs.RetentionDays;
  removalPolicy: RemovalPolicy;
}

export class AlertEvents extends FlatConstruct {
  readonly bus: events.EventBus;
  readonly rule: events.Rule;
  readonly log: logs.LogGroup;
  readonly webhookSecret: secretsmanager.Secret | undefined;

  constructor(scope: Construct, id: string, props: AlertEventsProps) {
    super(scope, id);
    const fn = props.alertsFunction;
    this.bus = new events.EventBus(scope, 'AlertEventBus', {
      description: `Fleet alerts: source ${ALERT_EVENT_SOURCE}, detail type "${ALERT_DETAIL_TYPE}"`,
    });
    this.log = new logs.LogGroup(scope, 'AlertEventLog', {
      retention: props.logRetention,
      removalPolicy: props.removalPolicy,
    });
    // The log group target with a resource policy of its own: CDK's CloudWatchLogGroup target would add a custom
    // resource (a Lambda with logs:PutResourcePolicy on *) to write the same policy.
    new logs.ResourcePolicy(scope, 'AlertEventLogPolicy', {
      policyStatements: [
        new iam.PolicyStatement({
          principals: [new iam.ServicePrincipal('events.amazonaws.com')],
          actions: ['logs:CreateLogStream', 'logs:PutLogEvents'],
          resources: [this.log.logGroupArn],
        }),
      ],
    });
    const logTarget: events.IRuleTarget = { bind: () => ({ arn: this.log.logGroupArn }) };
    this.rule = new events.Rule(scope, 'AlertEventRule', {
      eventBus: this.bus,
      description: 'Every fleet alert, kept in the alert event log',
      eventPattern: { source: [ALERT_EVENT_SOURCE], detailType: [ALERT_DETAIL_TYPE] },
      targets: [logTarget],
    });
    this.bus.grantPutEventsTo(fn);
    fn.addEnvironment('SVC_ALERTS_EVENT_BUS', this.bus.eventBusName);

    this.webhookSecret = props.webhooks
      ? new secretsmanager.Secret(scope, 'AlertWebhookSecret', {
          description:
            'HMAC-SHA256 key of the alert webhook signatures (alerts.webhook_secret); give it to receivers',
          generateSecretString: { passwordLength: 48, excludePunctuation: true, includeSpace: false },
          removalPolicy: props.removalPolicy,
        })
      : undefined;
    if (this.webhookSecret) {
      fn.addToRolePolicy(
        new iam.PolicyStatement({
          actions: ['secretsmanager:GetSecretValue'],
          resources: [this.webhookSecret.secretArn],
        }),
      );
      fn.addEnvironment('SVC_ALERTS_WEBHOOK_SECRET_ARN', this.webhookSecret.secretArn);
      Validations.of(this.webhookSecret).acknowledge({
        id: 'AwsSolutions-SMG4',
        reason:
          'Shared with the webhook receivers, which verify with it: rotated by runbook (put-secret-value).',
      });
    }
  }
}
