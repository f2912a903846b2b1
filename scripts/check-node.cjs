// Run before npm's own scripts (start, test, chat, cli, build): PromptPipe runs TypeScript directly, which needs
// Node >= 22.18. On an older Node the scripts would fail with ERR_UNKNOWN_FILE_EXTENSION ".ts"; say instead what is
// needed and how to get it. CommonJS and old syntax on purpose: it must run on any Node.
var parts = process.versions.node.split('.').map(Number);
if (parts[0] > 22 || (parts[0] === 22 && parts[1] >= 18)) process.exit(0);
process.stderr.write(
  'PromptPipe needs Node.js 22.18 or newer (24 LTS recommended); this is Node ' + process.versions.node + '.\n' +
    '  ./promptpipe            fetches Node 24 from the npm registry into .cache/ and runs the server\n' +
    '  ./promptpipe test       the same, for the tests\n' +
    '  source scripts/use-node.sh   puts that Node 24 first on PATH in this shell, for npm commands\n',
);
process.exit(1);
