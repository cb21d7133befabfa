// Stands in for @smithy/core's stream mixin for web ReadableStreams (its browser build) where the Node one imports it
// (a plugin of infra/bundle/split.ts, see INTERNAL_STUBS in infra/bundling.ts): the Node mixin hands it any body that
// is not a Node Readable, and the bundles' clients use the SDK's Node HTTP handler, whose bodies always are. The
// Node mixin turns this error into its own "Unexpected stream implementation", as it does for a body the browser
// mixin refuses.
export const sdkStreamMixin = (): never => {
  throw new Error('web ReadableStream bodies are not bundled into this function (see infra/bundling.ts)');
};
