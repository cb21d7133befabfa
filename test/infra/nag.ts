// cdk-nag's AwsSolutions findings of a scope, as the infra tests read them.
import type { Stack } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import type { IConstruct } from 'constructs';

export interface NagFinding {
  ruleName: string;
  /** cdk-nag 3 reports the construct paths of each violation, not CloudFormation resources. */
  violatingConstructs?: Array<{ constructPath: string }>;
}

/** Every finding left in `stack` (acknowledged ones are not findings), and whether the check passed. */
export function nagReport(root: IConstruct, stack: Stack): { findings: NagFinding[]; success: boolean } {
  const report = new AwsSolutionsChecks(root).validateScope(stack);
  // The report's violation type is not exported by cdk-nag; these are the fields it documents.
  return { findings: report.violations as unknown as NagFinding[], success: report.success };
}
