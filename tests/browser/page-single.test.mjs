// The one-file build (dist/prenet-calculator.html) opened from file:// with the network off and
// every http(s) request aborted: the acceptance suite.

import { requireBuilt, singleFileTarget } from './helpers.mjs';
import { pageSuite } from './page-suite.mjs';

pageSuite('the single file from file://, offline', async () => {
  requireBuilt();
  return singleFileTarget();
});
