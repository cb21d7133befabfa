// Stands in for @smithy/core's pure-JavaScript SHA-256 where its Node and WebCrypto hashes import it as a fallback
// (a plugin of infra/bundle/split.ts, see INTERNAL_STUBS in infra/bundling.ts): the Node hash uses it only when
// `node:crypto` has no sha256, which Node 24 always has; request signing uses `node:crypto`.
export class Sha256Js {
  constructor() {
    throw new Error('the JavaScript SHA-256 fallback is not bundled (see infra/bundling.ts)');
  }
}
