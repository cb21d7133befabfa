// See node-http.cjs.
module.exports = process.getBuiltinModule('node:stream');
