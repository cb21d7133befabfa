// See node-http.cjs.
module.exports = process.getBuiltinModule('node:util/types');
