// The static site (dist/), served by web/serve.mjs with its CSP header: the acceptance suite.

import { requireBuilt, servedTarget, startServer } from './helpers.mjs';
import { pageSuite } from './page-suite.mjs';

/** @type {{ url: string, stop: () => void } | undefined} */
let server;

pageSuite(
  'the served site',
  async () => {
    requireBuilt();
    server = await startServer();
    return servedTarget(server.url);
  },
  () => server?.stop(),
);
