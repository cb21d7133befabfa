// One feature's nested stack: the functions of the handlers under functions/<feature>/ (each with its role, policy
// and log group) and their API routes, integrations and invoke permissions. The root stack keeps the API, its stage,
// the database, the secrets, the schedules and the monitoring; each feature stack has CloudFormation's 500 resources
// to itself, so the service grows by features without reaching the limit.
import { NestedStack } from 'aws-cdk-lib';
import type * as apigwv2 from 'aws-cdk-lib/aws-apigatewayv2';
import type { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import type { Construct } from 'constructs';
import { constructIdFor, type PlannedFunction } from '../plan.ts';
import { ServiceFunctions, type ServiceFunctionsProps } from './functions.ts';
import { type ApiRoute, addApiRoutes } from './http-api.ts';

export interface FeatureStackProps extends ServiceFunctionsProps {
  /** The feature (PlannedFunction.feature) whose planned functions are `plan`. */
  feature: string;
  /** The API its routes join (the root stack's). */
  api: apigwv2.IHttpApi;
}

/** The construct id of a feature's stack ("requests" → "RequestsStack"). */
export const featureStackId = (feature: string) => `${constructIdFor(feature)}Stack`;

export class FeatureStack extends NestedStack {
  readonly functions: ServiceFunctions;
  /** Its sign-in routes, which the root stack's stage throttles. */
  readonly signinRoutes: ApiRoute[];

  constructor(scope: Construct, props: FeatureStackProps) {
    super(scope, featureStackId(props.feature), {
      description: `Agent control plane: the ${props.feature} feature's functions and routes`,
    });
    const { feature, api, ...functionsProps } = props;
    const foreign = props.plan.filter((planned) => planned.feature !== feature);
    if (foreign.length > 0) {
      throw new Error(`${feature} stack given ${foreign.map((planned) => planned.handler).join(', ')}`);
    }
    this.functions = new ServiceFunctions(this, 'ServiceFunctions', functionsProps);
    this.signinRoutes = addApiRoutes(this, api, props.plan, (handler) => this.functions.of(handler));
  }

  get byHandler(): ReadonlyMap<string, NodejsFunction> {
    return this.functions.byHandler;
  }
}

/** The planned functions grouped by feature, in the plan's order. */
export function byFeature(plan: readonly PlannedFunction[]): Map<string, PlannedFunction[]> {
  const groups = new Map<string, PlannedFunction[]>();
  for (const planned of plan) {
    const group = groups.get(planned.feature) ?? [];
    group.push(planned);
    groups.set(planned.feature, group);
  }
  return groups;
}
