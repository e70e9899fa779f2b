// Issue 19 on the page's logic, in Node: the fine-tuning fields (and any row of the core's training table,
// of every kind) in links, in the request's nested `training.finetune`, on the command line, which fields
// apply to which method, and the example links. The tables are the core's (the wasm catalogue) unless a
// test adds a synthetic row of a kind the table does not have yet (booleans).

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, test } from 'node:test';
import { buildRequestText, parseCommandLine, usage } from '../../web/cli/prenet.mjs';
import { EXAMPLES, exampleCommand, exampleParams } from '../../web/src/examples.js';
import { defaultScenario, linkValue, paramsToScenario, scenarioToJob, scenarioToParams, scenarioToPlanJob } from '../../web/src/scenario.js';
import { finetuneSetting, namesText, optionApplies, parseNames, SHOWN_WHEN } from '../../web/src/training-fields.js';
import { REPO_ROOT, engine, requireBuiltCore } from './helpers.mjs';

before(requireBuiltCore);

const catalog = await engine.catalog();
/** @typedef {import('../../web/src/types').CatalogOption} CatalogOption */

/**
 * A boolean row as the core's table would publish one (helpers of issue 19 add such rows: compile, packing).
 * @type {CatalogOption}
 */
const SWITCH = {
  key: 'compile_test',
  field: 'training.compile_test',
  kind: 'boolean',
  default: false,
  label: 'Test switch',
  doc: 'a synthetic switch',
  link: ['compile_test', 'ct'],
  flag: '--compile-test',
  flag_value: null,
};

/** The core's tables, plus the synthetic switch when the core has no boolean training row yet. */
const OPTIONS = catalog.options.some((option) => option.kind === 'boolean') ? catalog.options : [...catalog.options, SWITCH];

/** @type {import('../../web/src/scenario.js').Known} */
const KNOWN = {
  presets: catalog.presets.map((preset) => preset.id),
  hardware: catalog.hardware.map((hardware) => hardware.id),
  options: OPTIONS,
  parallel_options: catalog.parallel_options,
};

/** @param {string} key */
function row(key) {
  const found = OPTIONS.find((option) => option.key === key);
  assert.ok(found, `the catalogue has a row "${key}"`);
  return found;
}

/**
 * A value of each row's kind that differs from its default, as the scenario holds it.
 * @param {CatalogOption} option
 * @returns {unknown}
 */
function sampleValue(option) {
  switch (option.kind) {
    case 'choice':
      return (option.values ?? []).find((value) => value !== option.default);
    case 'boolean':
      return option.default !== true;
    case 'names':
      return ['q_proj', 'k_proj', 'o_proj'];
    case 'integer':
      return Math.min(option.max ?? 7, (option.min ?? 0) + 7);
    default:
      return ((option.min ?? 0) + Math.min(option.max ?? 1, 1)) / 2 + 0.25;
  }
}

describe('links: every row of the training table, of every kind', () => {
  test('the fine-tuning rows are in the table with the kinds the page builds fields for', () => {
    assert.equal(row('finetune.method').kind, 'choice');
    assert.equal(row('finetune.rank').kind, 'integer');
    assert.equal(row('finetune.targets').kind, 'names');
    for (const option of OPTIONS) assert.ok(['integer', 'number', 'choice', 'names', 'boolean'].includes(option.kind), `${option.key}: ${option.kind}`);
  });

  test('a scenario with a value for every row survives the round trip through a link', async () => {
    const scenario = defaultScenario();
    const training = /** @type {Record<string, unknown>} */ (scenario.training);
    for (const option of OPTIONS) training[option.key] = sampleValue(option);
    const { params } = await scenarioToParams(scenario, KNOWN);
    for (const option of OPTIONS) {
      assert.equal(params.get(option.link[0] ?? ''), linkValue(option, training[option.key]), `${option.key} under ${option.link[0]}`);
    }
    const back = await paramsToScenario(params, KNOWN);
    assert.deepEqual(back.problems, []);
    assert.deepEqual(back.scenario.training, scenario.training);
  });

  test('names are comma-separated; one name is kept as the name ("all-linear"), blank unsets', async () => {
    assert.equal(linkValue(row('finetune.targets'), ['q_proj', 'v_proj']), 'q_proj,v_proj');
    assert.deepEqual(parseNames(' q_proj , v_proj,, '), ['q_proj', 'v_proj']);
    assert.equal(parseNames('all-linear'), 'all-linear');
    assert.equal(parseNames(' , '), undefined);
    assert.equal(namesText(['a', 'b'], ', '), 'a, b');
    const link = new URLSearchParams('preset=gpt2&ft=lora&rank=8&targets=all-linear');
    const { scenario, problems } = await paramsToScenario(link, KNOWN);
    assert.deepEqual(problems, []);
    assert.deepEqual(scenario.training, { batch_size: 32, optimizer: 'adam', 'finetune.method': 'lora', 'finetune.rank': 8, 'finetune.targets': 'all-linear' }, 'aliases of the link names read too');
    const written = (await scenarioToParams(scenario, KNOWN)).params;
    assert.equal(written.get('finetune'), 'lora', 'the first link name is the one written');
    assert.equal(written.get('lora_rank'), '8');
    assert.equal(written.get('lora_targets'), 'all-linear');
    const blank = await paramsToScenario(new URLSearchParams('lora_targets='), KNOWN, scenario);
    assert.equal(/** @type {Record<string, unknown>} */ (blank.scenario.training)['finetune.targets'], undefined);
  });

  test('switches read 1/0 or true/false, are held only when not the default, and anything else is named', async () => {
    const option = /** @type {CatalogOption} */ (OPTIONS.find((o) => o.kind === 'boolean'));
    const name = option.link[0] ?? '';
    const on = await paramsToScenario(new URLSearchParams(`${name}=1`), KNOWN);
    assert.equal(/** @type {Record<string, unknown>} */ (on.scenario.training)[option.key], option.default !== true ? true : undefined);
    assert.equal((await scenarioToParams(on.scenario, KNOWN)).params.get(name), option.default !== true ? '1' : null);
    const off = await paramsToScenario(new URLSearchParams(`${name}=false`), KNOWN, on.scenario);
    assert.equal(/** @type {Record<string, unknown>} */ (off.scenario.training)[option.key], option.default === true ? false : undefined);
    const bad = await paramsToScenario(new URLSearchParams(`${name}=yes`), KNOWN);
    assert.deepEqual(bad.problems, [`${name}: expected 1 (${option.label.toLowerCase()}) or 0, got "yes"`]);
  });

  test('a bad value is named by its link parameter and left at the default; numbers out of range are kept', async () => {
    const { scenario, problems } = await paramsToScenario(new URLSearchParams('finetune=adapters&lora_rank=0&lora_alpha=x'), KNOWN);
    assert.deepEqual(problems, ['finetune: expected full, lora, qlora or freeze, got "adapters"', 'lora_alpha: expected a number, got "x"']);
    assert.deepEqual(scenario.training, { batch_size: 32, optimizer: 'adam', 'finetune.rank': 0 }, 'rank 0 goes to the core, which names the field');
  });

  test('defaultScenario is unchanged: no fine-tune, nothing written for it', async () => {
    assert.deepEqual(defaultScenario().training, { batch_size: 32, optimizer: 'adam' });
    const { params } = await scenarioToParams(defaultScenario(), KNOWN);
    for (const option of OPTIONS.filter((o) => o.key.startsWith('finetune.'))) {
      for (const name of option.link) assert.equal(params.has(name), false, name);
    }
  });
});

describe('the request: section rows nest as typed', () => {
  const tuned = () => {
    const scenario = defaultScenario();
    scenario.preset = 'gpt2';
    Object.assign(scenario.training, {
      'finetune.method': 'lora',
      'finetune.rank': 8,
      'finetune.alpha': 16,
      'finetune.dropout': 0.1,
      'finetune.targets': ['q_proj', 'v_proj'],
      'finetune.base_precision': 'bf16',
    });
    return scenario;
  };

  test('scenarioToJob and scenarioToPlanJob send training.finetune as one nested object of typed values', () => {
    const expected = { method: 'lora', rank: 8, alpha: 16, dropout: 0.1, targets: ['q_proj', 'v_proj'], base_precision: 'bf16' };
    const job = scenarioToJob(tuned(), { perLayer: 'none' });
    assert.deepEqual(job.request.training, { batch_size: 32, optimizer: 'adam', finetune: expected });
    assert.deepEqual(scenarioToPlanJob(tuned()).request.training?.finetune, expected);
  });

  test('the core reads it: a bad rank is refused naming training.finetune.rank, a good request is echoed or refused naming the fine-tune', async () => {
    const bad = tuned();
    /** @type {Record<string, unknown>} */ (bad.training)['finetune.rank'] = 0;
    await assert.rejects(engine.predict(scenarioToJob(bad, { perLayer: 'none' }).request), (error) => {
      assert.equal(/** @type {{ field: string }} */ (error).field, 'training.finetune.rank');
      return true;
    });
    // LoRA may or may not be modelled yet: either the echo carries what was sent, or the refusal names the fine-tune.
    try {
      const response = await engine.predict(scenarioToJob(tuned(), { perLayer: 'none' }).request);
      assert.equal(response.training.finetune?.method, 'lora');
      assert.equal(response.training.finetune?.rank, 8);
    } catch (error) {
      assert.match(String(/** @type {{ field?: string }} */ (error).field), /^training\.finetune/);
    }
  });
});

describe('which fields apply', () => {
  const method = (/** @type {string} */ value) => ({ 'finetune.method': value });

  test('LoRA fields only for lora and qlora, trained blocks only for freeze, frozen storage for all but full', () => {
    for (const key of ['finetune.rank', 'finetune.alpha', 'finetune.dropout', 'finetune.targets']) {
      assert.deepEqual(['full', 'lora', 'qlora', 'freeze'].map((m) => optionApplies(row(key), method(m), OPTIONS)), [false, true, true, false], key);
      assert.equal(optionApplies(row(key), {}, OPTIONS), false, `${key}: not at the default method (full)`);
    }
    assert.deepEqual(['full', 'lora', 'qlora', 'freeze'].map((m) => optionApplies(row('finetune.trainable_layers'), method(m), OPTIONS)), [false, false, false, true]);
    assert.deepEqual(['full', 'lora', 'qlora', 'freeze'].map((m) => optionApplies(row('finetune.base_precision'), method(m), OPTIONS)), [false, true, true, true]);
    for (const option of OPTIONS.filter((o) => SHOWN_WHEN[o.key] === undefined)) assert.equal(optionApplies(option, {}, OPTIONS), true, option.key);
  });

  test('every rule names a row of the table, and a switch that is a choice with those values', () => {
    for (const [key, rule] of Object.entries(SHOWN_WHEN)) {
      row(key);
      const toggle = row(rule.switch);
      assert.equal(toggle.kind, 'choice');
      for (const value of rule.values) assert.ok(toggle.values?.includes(value), `${rule.switch} has ${value}`);
    }
  });
});

describe('the command line', () => {
  /**
   * @param {string[]} argv
   * @param {import('../../web/cli/prenet.mjs').Tables} [tables]
   */
  async function requestOf(argv, tables = catalog) {
    return JSON.parse(await buildRequestText(parseCommandLine(['predict', ...argv], tables).values, tables));
  }

  test('fine-tuning flags nest into training.finetune; names comma-separated, one name as itself', async () => {
    const request = await requestOf(['--preset', 'gpt2', '--finetune', 'lora', '--lora-rank', '8', '--lora-dropout', '0', '--lora-targets', 'q_proj, v_proj']);
    assert.deepEqual(request.training, { finetune: { method: 'lora', rank: 8, dropout: 0, targets: ['q_proj', 'v_proj'] } });
    const all = await requestOf(['--lora-targets', 'all-linear', '--trainable-layers', '4', '--finetune', 'freeze']);
    assert.deepEqual(all.training.finetune, { targets: 'all-linear', trainable_layers: 4, method: 'freeze' });
  });

  test('a boolean row is a switch: bare is true, =false false, other values refused', async () => {
    const tables = { options: OPTIONS, parallel_options: catalog.parallel_options };
    const option = /** @type {CatalogOption} */ (OPTIONS.find((o) => o.kind === 'boolean'));
    const [section, member] = option.key.includes('.') ? option.key.split('.') : [undefined, option.key];
    const at = (/** @type {any} */ training) => (section === undefined ? training[member ?? ''] : training[section][member ?? '']);
    assert.equal(at((await requestOf([option.flag, '--batch', '4'], tables)).training), true);
    assert.equal(at((await requestOf([`${option.flag}=false`], tables)).training), false);
    assert.throws(() => parseCommandLine(['predict', `${option.flag}=maybe`], tables), /expected true or false/);
    assert.match(usage(tables), new RegExp(`  ${option.flag} +${option.field}: true when given`));
  });

  test('--help lists every row of the table from its row: flag, field, accepted values, default', () => {
    const text = usage(catalog);
    for (const option of catalog.options) {
      const flag = option.flag_value === null ? option.flag : `${option.flag} ${option.flag_value}`;
      assert.ok(text.includes(`  ${flag}`), flag);
      assert.ok(text.includes(`${option.field}: `), option.field);
    }
    assert.match(text, /--lora-targets LIST +training\.finetune\.targets: names, comma-separated \(default q_proj,v_proj\)/);
    assert.doesNotMatch(text, /undefined/);
  });
});

describe('the examples', () => {
  test('three examples, each a link the page reads without a problem, meaning what its title says', async () => {
    assert.equal(EXAMPLES.length, 3);
    const read = await Promise.all(EXAMPLES.map((example) => paramsToScenario(exampleParams(example), KNOWN)));
    for (const [i, { problems }] of read.entries()) assert.deepEqual(problems, [], EXAMPLES[i]?.title);
    const [qlora, lora, full] = read.map(({ scenario }) => scenario);
    assert.deepEqual(
      [qlora?.preset, qlora?.hardware, qlora?.training],
      ['llama-3.1-8b', ['rtx-4090'], { batch_size: 2, optimizer: 'adam', precision: 'bf16', attention: 'flash', 'finetune.method': 'qlora', 'finetune.rank': 16, 'finetune.targets': 'all-linear', seq_len: 2048 }],
    );
    assert.equal(qlora?.parallel.recompute, 'full', 'gradient checkpointing, as QLoRA recipes run');
    assert.deepEqual([lora?.preset, lora?.hardware, lora?.training], ['qwen3-8b', ['h100-sxm'], { batch_size: 2, optimizer: 'adam', precision: 'bf16', attention: 'flash', seq_len: 2048, 'finetune.method': 'lora', 'finetune.rank': 16 }]);
    assert.deepEqual([full?.preset, full?.hardware, full?.training.precision], ['llama-3.1-70b', ['h100-sxm'], 'bf16']);
    assert.equal(/** @type {Record<string, unknown>} */ (full?.training ?? {}).offload, 'optimizer', 'CPU offload of the optimizer');
    assert.deepEqual(full?.parallel, { gpus: 8, zero_stage: 3, recompute: 'full' }, 'FSDP (ZeRO 3) on 8 GPUs with full recomputation');
  });

  test('each example fits its accelerators, as the core predicts it (an example that does not fit misleads)', async () => {
    for (const example of EXAMPLES) {
      const { scenario } = await paramsToScenario(exampleParams(example), KNOWN);
      const response = await engine.predictRoofline(JSON.stringify(scenarioToJob(scenario, { perLayer: 'none' }).request));
      assert.ok(response.results.every((/** @type {{ fits: boolean }} */ r) => r.fits), example.title);
    }
  });

  test('docs/EMBED.md lists each example with its parameters, as examples.js has them', () => {
    const doc = readFileSync(join(REPO_ROOT, 'docs/EMBED.md'), 'utf8');
    for (const example of EXAMPLES) assert.ok(doc.includes(`| ${example.title} | \`${exampleParams(example).toString()}\` |`), example.title);
  });

  test('as commands (prenet --help), each builds the request the page sends for the same link', async () => {
    const rows = [...catalog.options, ...catalog.parallel_options];
    for (const example of EXAMPLES) {
      const command = exampleCommand(example, rows);
      assert.ok(usage(catalog).includes(command), `--help shows: ${command}`);
      const argv = command.split(' ').slice(1);
      const fromFlags = JSON.parse(await buildRequestText(parseCommandLine(argv, catalog).values, catalog));
      const { scenario } = await paramsToScenario(exampleParams(example), KNOWN);
      const job = scenarioToJob(scenario, { perLayer: 'none' });
      const { optimizer: _optimizer, ...training } = /** @type {Record<string, unknown>} */ (job.request.training);
      if (!('batch' in example.params)) delete training.batch_size; // the page always writes its batch
      assert.deepEqual(fromFlags.training, training, example.title);
      assert.deepEqual(fromFlags.hardware, job.request.hardware, example.title);
      assert.deepEqual(fromFlags.parallel, job.request.parallel, example.title);
    }
  });
});

describe('the summary of the fine-tune, from the response\'s echo', () => {
  test('LoRA, QLoRA and freeze in a few words; nothing for a full fine-tune or no echo', () => {
    assert.equal(finetuneSetting({ finetune: { method: 'lora', rank: 16, targets: ['q_proj', 'v_proj'], base_precision: 'nf4' } }), 'LoRA r16 on q_proj, v_proj, NF4 base');
    assert.equal(finetuneSetting({ finetune: { method: 'qlora', rank: 16, alpha: 32, targets: 'all-linear' } }), 'QLoRA r16 on all linear layers');
    assert.equal(finetuneSetting({ finetune: { method: 'qlora', rank: 8, targets: ['all-linear'], base_precision: 'nf4' } }), 'QLoRA r8 on all linear layers, NF4 base');
    assert.equal(finetuneSetting({ finetune: { method: 'freeze', trainable_layers: 4 } }), 'freeze: top 4 blocks');
    assert.equal(finetuneSetting({ finetune: { method: 'freeze', trainable_layers: 1, base_precision: 'bf16' } }), 'freeze: top 1 block, BF16 base');
    assert.equal(finetuneSetting({ finetune: { method: 'full', rank: 16, alpha: 32, targets: ['q_proj', 'v_proj'] } }), null);
    assert.equal(finetuneSetting({}), null);
  });

  test('the core\'s echo of a full fine-tune (today\'s default) says nothing extra', async () => {
    const response = await engine.predict({ model: { preset: 'gpt2' }, training: { batch_size: 2, finetune: { method: 'full' } }, hardware: ['h100-sxm'] });
    assert.equal(response.training.finetune?.method, 'full');
    assert.equal(finetuneSetting(response.training), null);
  });
});
