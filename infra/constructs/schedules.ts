// The schedules: one EventBridge rule per `schedules` row of the route table (shared/routes.ts), each retried, and a
// dead-letter queue per scheduled function for what still fails, whether delivering the event or running it.
import { Duration, Validations } from 'aws-cdk-lib';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as destinations from 'aws-cdk-lib/aws-lambda-destinations';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import type { PlannedFunction } from '../plan.ts';
import { rateExpression } from '../rate.ts';
import { FlatConstruct } from './flat-construct.ts';

export interface SchedulesProps {
  /** Its `schedules` (the planned functions without any have no rule). */
  plan: PlannedFunction[];
  /** The function of a planned handler. */
  functionOf: (handler: string) => lambda.IFunction;
}

export interface ScheduledRun {
  handler: string;
  fn: lambda.IFunction;
  everyMs: number;
}

export class Schedules extends FlatConstruct {
  /** One per scheduled function, named after it (its construct id). */
  readonly deadLetterQueues: Array<{ name: string; queue: sqs.Queue }> = [];
  /** One per schedule row. */
  readonly runs: ScheduledRun[] = [];

  constructor(scope: Construct, id: string, props: SchedulesProps) {
    super(scope, id);
    // Created in `scope`, with the ids the deployed stack has (see flat-construct.ts).
    for (const planned of props.plan) {
      if (planned.schedules.length === 0) continue;
      const fn = props.functionOf(planned.handler);
      const queue = new sqs.Queue(scope, `${planned.constructId}DeadLetters`, {
        retentionPeriod: Duration.days(14),
        encryption: sqs.QueueEncryption.SQS_MANAGED,
        enforceSSL: true,
      });
      Validations.of(queue).acknowledge({
        id: 'AwsSolutions-SQS3',
        reason: 'This queue is itself the dead-letter queue of a scheduled function.',
      });
      this.deadLetterQueues.push({ name: planned.constructId, queue });
      // Failures of the function itself (async invocation), after Lambda's own retries.
      fn.configureAsyncInvoke({
        retryAttempts: 2,
        maxEventAge: Duration.hours(1),
        onFailure: new destinations.SqsDestination(queue),
      });
      for (const schedule of planned.schedules) {
        new events.Rule(scope, `${schedule.id[0]!.toUpperCase()}${schedule.id.slice(1)}Schedule`, {
          description: `${planned.handler} every ${schedule.everyMs / 60_000} min`,
          schedule: events.Schedule.expression(rateExpression(schedule.everyMs, `schedules.${schedule.id}`)),
          targets: [
            // Failures to deliver the event (throttling, permissions), after EventBridge's retries.
            new targets.LambdaFunction(fn, {
              event: events.RuleTargetInput.fromObject({ schedule: schedule.id }),
              retryAttempts: 3,
              maxEventAge: Duration.hours(1),
              deadLetterQueue: queue,
            }),
          ],
        });
        this.runs.push({ handler: planned.handler, fn, everyMs: schedule.everyMs });
      }
    }
  }
}
