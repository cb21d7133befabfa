// The base of the stack's parts (infra/constructs/*.ts): a construct that creates its resources beside itself, in
// the scope it was given (the stack), not under itself, so that every resource keeps the logical ID it was deployed
// with.
import { Construct } from 'constructs';

/**
 * A part of the stack whose resources are created in its parent scope (the `scope` its constructor receives), with
 * the ids they had before the stack was split into parts.
 *
 * Why: CloudFormation knows a resource by its logical ID, and CDK derives that ID from the construct path. The stack's
 * resources were first defined directly in the stack (`AgentControlPlane/Database`, `AgentControlPlane/JwtSecret`,
 * …). Created under a part (`AgentControlPlane/NetworkAndDatabase/Database`) they would get new logical IDs, and the
 * next deploy would replace them: a new, empty database cluster, new secrets, new log groups. Overriding each
 * resource's logical ID instead would miss the resources CDK creates inside its own constructs (policies,
 * permissions, subnets) and would still change each asset's hash and `aws:cdk:path`, which follow the path too.
 *
 * So a part is a node of its own in the construct tree, named after its job, and its resources are its siblings.
 * What is applied to the part's node (Tags.of, Validations.of, Aspects.of) does not reach them: apply it to the
 * resources, or to the stack. test/infra/logical-ids.test.ts keeps the logical IDs of the stateful resources.
 */
export abstract class FlatConstruct extends Construct {}
