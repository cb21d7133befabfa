// Stands in for @smithy/core/event-streams inside the Lambda bundles (an esbuild alias, infra/bundling.ts). Only
// operations with event-stream members load it (e.g. Bedrock, Transcribe streaming); the RDS Data API and Secrets
// Manager have none, so the codec (~15 KB) is left out. The S3 client (the event archive) resolves its marshaller at
// construction for SelectObjectContent, which the archive never calls: here it has none.
// Reaching this is a bundling mistake, said loudly.
const unavailable = (): never => {
  throw new Error('event streams are not bundled into this function (see infra/bundling.ts)');
};

export class EventStreamSerde {
  constructor() {
    unavailable();
  }
}

export const eventStreamSerdeProvider = unavailable;

/**
 * The S3 client's config step, which would build the marshaller by calling eventStreamSerdeProvider (above: it
 * throws). Only an event-stream operation reads the marshaller; the config is left without one.
 */
export const resolveEventStreamSerdeConfig = <T extends object>(input: T): T => input;
