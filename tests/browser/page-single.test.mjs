// The one-file build (dist/prenet-calculator.html) opened from file:// with the network off and
// every http(s) request aborted: the acceptance suite.

import { singleFileOpener } from './helpers.mjs';
import { pageSuite } from './page-suite.mjs';

const single = singleFileOpener();
pageSuite('the single file from file://, offline', single.open, single.close);
