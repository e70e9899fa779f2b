// Issue 21 on the page's logic, in Node with the real wasm engine: the first screen (startScenario) and the
// gallery of starting scenarios (examples.js GALLERY). Each gallery entry must be a link the page reads
// without a problem and that the core predicts, fitting, on every accelerator it names: a starting point
// that does not fit, or is refused, misleads. The first screen must be honest: some accelerators fit, some
// do not, and those that do not get the core's advice.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, test } from 'node:test';
import { buildRequestText, parseCommandLine, usage } from '../../web/cli/prenet.mjs';
import { exampleCommand, exampleParams, GALLERY } from '../../web/src/examples.js';
import { defaultScenario, paramsToScenario, scenarioToJob, scenarioToParams, startScenario } from '../../web/src/scenario.js';
import { REPO_ROOT, engine, requireBuiltCore } from './helpers.mjs';

before(requireBuiltCore);

const catalog = await engine.catalog();
/** @type {import('../../web/src/scenario.js').Known} */
const KNOWN = {
  presets: catalog.presets.map((/** @type {{ id: string }} */ p) => p.id),
  hardware: catalog.hardware.map((/** @type {{ id: string }} */ h) => h.id),
  options: catalog.options,
  parallel_options: catalog.parallel_options,
};

/** @param {import('../../web/src/scenario.js').Scenario} scenario */
async function predict(scenario) {
  return engine.predictRoofline(JSON.stringify(scenarioToJob(scenario, { perLayer: 'none' }).request));
}

describe('the first screen', () => {
  test('an 8B model in BF16 on six catalogue accelerators, surviving its own link', async () => {
    const start = startScenario();
    assert.ok(start.hardware.length === 6 && start.hardware.every((id) => KNOWN.hardware.includes(id)), start.hardware.join());
    const preset = catalog.presets.find((/** @type {{ id: string }} */ p) => p.id === start.preset);
    assert.ok(preset !== undefined, start.preset);
    assert.equal(start.training.precision, 'bf16');
    const { params } = await scenarioToParams(start, KNOWN);
    const back = await paramsToScenario(params, KNOWN);
    assert.deepEqual(back.problems, []);
    assert.deepEqual(back.scenario, start, 'the link written on load restores the same scenario');
    assert.deepEqual(defaultScenario().training, { batch_size: 32, optimizer: 'adam' }, 'the link base sets nothing a link leaves out');
  });

  test('the link base keeps the defaults docs/EMBED.md lists for a link or element that leaves them out', () => {
    const doc = readFileSync(join(REPO_ROOT, 'docs/EMBED.md'), 'utf8');
    const documented = (/** @type {string} */ name) => new RegExp(`^\\| \`${name}\` \\|[^|]*\\| \`([^\`]+)\` \\|$`, 'm').exec(doc)?.[1];
    assert.equal(documented('preset'), defaultScenario().preset);
    assert.equal(documented('hardware'), defaultScenario().hardware.join(','));
  });

  test('the core predicts it: 7-9 G parameters, some accelerators fit, the others get advice', async () => {
    const response = await predict(startScenario());
    assert.ok(response.model.parameters > 7e9 && response.model.parameters < 9e9, String(response.model.parameters));
    const fits = response.results.filter((/** @type {{ fits: boolean }} */ r) => r.fits);
    assert.ok(fits.length > 0 && fits.length < response.results.length, `${fits.length} of ${response.results.length} fit`);
    for (const r of response.results.filter((/** @type {{ fits: boolean }} */ r) => !r.fits)) {
      assert.ok(Array.isArray(r.memory_advice), `${r.hardware}: the core's memory advice is in the response`);
    }
  });
});

describe('the gallery', () => {
  test('each entry has a title, a one-line description and a link the page reads without a problem', async () => {
    assert.ok(GALLERY.length >= 4);
    for (const start of GALLERY) {
      assert.ok(start.title.length > 0 && start.description.length > 0 && !start.description.includes('\n'), start.title);
      const { problems } = await paramsToScenario(exampleParams(start), KNOWN);
      assert.deepEqual(problems, [], start.title);
    }
  });

  test('each entry is predicted, not refused, and fits on every accelerator it names', async () => {
    for (const start of GALLERY) {
      const { scenario } = await paramsToScenario(exampleParams(start), KNOWN);
      const response = await predict(scenario);
      assert.equal(response.results.length, scenario.hardware.length, start.title);
      for (const r of response.results) assert.ok(r.fits, `${start.title}: ${r.hardware} needs ${r.memory_gb} GB of ${r.device_memory_gb}`);
    }
  });

  test('the entries are the scenarios the issue names: 64 GPUs, one RTX 4090 with LoRA, MoE on 256 with experts, a ResNet', async () => {
    const read = await Promise.all(GALLERY.map(async (start) => (await paramsToScenario(exampleParams(start), KNOWN)).scenario));
    const families = new Map(catalog.presets.map((/** @type {{ id: string, family: string }} */ p) => [p.id, p.family]));
    assert.ok(read.some((s) => s.parallel.gpus === 64 && s.hardware.includes('h100-sxm')));
    assert.ok(read.some((s) => s.hardware.join() === 'rtx-4090' && /** @type {Record<string, unknown>} */ (s.training)['finetune.method'] === 'lora' && s.parallel.gpus === undefined));
    assert.ok(read.some((s) => s.parallel.gpus === 256 && /moe/.test(families.get(s.preset) ?? '') && /** @type {Record<string, unknown>} */ (s.parallel).expert !== undefined));
    assert.ok(read.some((s) => s.preset.startsWith('resnet') && s.parallel.gpus === undefined));
  });

  test('docs/EMBED.md lists each entry with its link parameters, as examples.js has them', () => {
    const doc = readFileSync(join(REPO_ROOT, 'docs/EMBED.md'), 'utf8');
    for (const start of GALLERY) assert.ok(doc.includes(`| ${start.title} | \`${exampleParams(start).toString()}\` |`), start.title);
  });

  test('as commands (prenet --help lists them), each builds the request the page sends for the same link', async () => {
    const rows = [...catalog.options, ...catalog.parallel_options];
    for (const start of GALLERY) {
      const command = exampleCommand(start, rows);
      assert.ok(usage(catalog).includes(`# ${start.title}\n  ${command}`), `--help shows: ${command}`);
      const fromFlags = JSON.parse(await buildRequestText(parseCommandLine(command.split(' ').slice(1), catalog).values, catalog));
      const { scenario } = await paramsToScenario(exampleParams(start), KNOWN);
      const request = scenarioToJob(scenario, { perLayer: 'none' }).request;
      assert.deepEqual(fromFlags.training, request.training, start.title);
      assert.deepEqual(fromFlags.hardware, request.hardware, start.title);
      assert.deepEqual(fromFlags.parallel, request.parallel, start.title);
    }
  });
});
