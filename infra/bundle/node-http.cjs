// A builtin as a CommonJS module, evaluated when the bundled code that needs it first runs (see LAZY_BUILTINS in
// infra/bundling.ts). process.getBuiltinModule, not require('node:http'): the alias would send that require back here.
module.exports = process.getBuiltinModule('node:http');
