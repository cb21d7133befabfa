// Stands in for @smithy/core's region lookup in the EC2 instance metadata service (IMDS) where the SDK's region
// config and its defaults mode import it (a plugin of infra/bundle/split.ts, see INTERNAL_STUBS in
// infra/bundling.ts). The SDK asks IMDS only when AWS_REGION is not set; Lambda always sets it (so do `sam local`
// and the tests), and a Lambda function has no IMDS to ask: the real lookup would end as this one does, with no
// region (the SDK then says "Region is missing"), after a timeout.
export const getInstanceMetadataRegion = async (): Promise<string | undefined> => undefined;
