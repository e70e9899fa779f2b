// The static site (dist/), served by web/serve.mjs with its CSP header: the acceptance suite.

import { servedOpener } from './helpers.mjs';
import { pageSuite } from './page-suite.mjs';

const served = servedOpener();
pageSuite('the served site', served.open, served.close);
