// The entry of the single file (`npm run agent:build`). A client's hook call, the command run on every MCP tool call,
// goes straight to the hook's own code, which loads nothing else, and so does the MCP proxy; every other command goes to the CLI (cli.ts).
if (process.argv[2] === 'hook') {
  void import('./hooks/main.ts').then(({ runHookProcess }) => runHookProcess(process.argv.slice(2)));
} else if (process.argv[2] === 'mcp-proxy') {
  // The proxy's arguments after `--` are the server's own: the CLI's option parser must never see them.
  void import('./proxy/main.ts').then(({ runProxyProcess }) => runProxyProcess(process.argv.slice(2)));
} else {
  void import('./cli.ts');
}
