/** The `promptpipe` executable: `node src/cli/main.ts <command>` (`npm start` runs `serve`). */
import { runCli } from './cli.ts';

await runCli(process.argv.slice(2));
