// Stands in for @smithy/core's S3 endpoint customizations where the endpoint middleware's index of service
// customizations exports them (a plugin of infra/bundle/split.ts, see INTERNAL_STUBS in infra/bundling.ts): the
// endpoint resolution calls them only for a client whose service is S3, and the bundles carry the RDS Data API and
// Secrets Manager clients alone, but for the event archive's, which keeps the real module (S3_CUSTOMIZATIONS_STUB).
// Reaching this is a bundling mistake, said loudly. (JavaScript: the constants come from the real module, which has
// no type declarations next to it.)
const unavailable = () => {
  throw new Error(
    'the S3 endpoint customizations are not bundled into this function (see infra/bundling.ts)',
  );
};

export const resolveParamsForS3 = async () => unavailable();
export const isDnsCompatibleBucketName = unavailable;
export const isArnBucketName = unavailable;
export {
  DOT_PATTERN,
  S3_HOSTNAME_PATTERN,
} from '../../node_modules/@smithy/core/dist-es/submodules/endpoints/middleware-endpoint/service-customizations/s3.js';
