// The engine shared by the page, the CLI and the tests: loads the wasm core once and turns its
// JSON strings into objects, and its error objects into one exception type, PrenetError.
//
// Why plain JavaScript: Node 20 cannot run TypeScript, and the CLI and Node tests must execute this
// very file rather than a compiled copy of it. Types are JSDoc, checked by `npm run typecheck`
// (tsc with checkJs and strict), against the contract types in types.ts.
//
// How the wasm factory is found differs by environment (a bundler import in the page, a file read in
// Node), so this module takes a loader function; see web/cli/node-engine.mjs, engine-worker.ts (the
// page's engine) and embed.ts (the element's).

/**
 * @typedef {import('./types').PredictRequest} PredictRequest
 * @typedef {import('./types').PredictResponse} PredictResponse
 * @typedef {import('./types').Catalog} Catalog
 * @typedef {import('./types').PrenetCoreModule} PrenetCoreModule
 * @typedef {import('./types').ModelRunner} ModelRunner
 */

/** A request the core rejected. `field` is a dotted path into the request, or "request". */
export class PrenetError extends Error {
  /**
   * @param {string} field
   * @param {string} message one line, starting with the field (docs/API.md)
   */
  constructor(field, message) {
    super(message);
    this.name = 'PrenetError';
    /** @readonly */
    this.field = field;
  }
}

/**
 * @param {unknown} value
 * @returns {value is import('./types').ErrorBody}
 */
function isErrorBody(value) {
  if (typeof value !== 'object' || value === null || !('error' in value)) return false;
  const error = value.error;
  return (
    typeof error === 'object' &&
    error !== null &&
    'field' in error &&
    typeof error.field === 'string' &&
    'message' in error &&
    typeof error.message === 'string'
  );
}

/**
 * The one place where core errors become exceptions.
 * @template T
 * @param {string} text JSON returned by the core
 * @returns {T}
 */
export function unwrap(text) {
  /** @type {unknown} */
  let value;
  try {
    value = JSON.parse(text);
  } catch (cause) {
    // Not a user error: the core broke its contract. Keep the start of the text for the bug report.
    throw new Error(`prenet core returned invalid JSON: ${text.slice(0, 200)}`, { cause });
  }
  if (isErrorBody(value)) throw new PrenetError(value.error.field, value.error.message);
  return /** @type {T} */ (value);
}

/**
 * The request as the core takes it. A text over the core's size limit needs no check here: the wasm binding refuses
 * one whose characters alone pass the limit before copying it into wasm memory (wasm/bindings.cpp, text_call).
 * @param {PredictRequest | string} request an object, or JSON text passed to the core unchanged
 *   (so malformed text gets the core's own "request" error)
 */
function requestText(request) {
  return typeof request === 'string' ? request : JSON.stringify(request);
}

/**
 * Learned prediction: the core opens a session listing the rows each class model must time, the runner
 * evaluates one batch per class (all layers x all accelerators at once), and the core assembles the
 * response and closes the session. Sessions are independent, so predictions may be in flight together.
 * @param {PrenetCoreModule} module
 * @param {ModelRunner} runner
 * @param {string} text
 * @returns {Promise<PredictResponse>}
 */
async function predictLearned(module, runner, text) {
  const { learnedPrepare, learnedFeatures, learnedFinish, learnedRelease } = module;
  if (!learnedPrepare || !learnedFeatures || !learnedFinish || !learnedRelease) return unwrap(module.predict(text));
  /** @type {{session: number, classes: {dataset: string, rows: number, width: number}[]}} */
  const prepared = unwrap(learnedPrepare(text));
  /** @type {Float32Array[]} */
  let outputs;
  try {
    // Copy every class's rows out of wasm memory before anything else can call into the module.
    const inputs = prepared.classes.map((c, i) => ({
      ...c,
      features: new Float32Array(learnedFeatures(prepared.session, i)),
    }));
    outputs = await Promise.all(
      inputs.map((c) =>
        c.rows > 0 ? runner.run(c.dataset, c.features, c.rows, c.width) : Promise.resolve(new Float32Array(0)),
      ),
    );
  } catch (error) {
    learnedRelease(prepared.session);
    throw error;
  }
  return unwrap(learnedFinish(prepared.session, outputs));
}

/**
 * @param {() => Promise<PrenetCoreModule>} load instantiates the wasm module; called at most once
 *   unless it fails (a failed load is retried on the next call rather than cached forever).
 * @param {() => Promise<ModelRunner | null>} [loadModels] the learned predictors; without them (or when
 *   they fail to load) predictions come from the analytic roofline, and responses say so in `predictor`.
 * @param {{ catalogText?: string | null }} [options] `catalogText`: this very core's catalogue, asked of
 *   it when the bundle was built (vite.config.ts), so the catalogue is there before the core has loaded
 */
export function createEngine(load, loadModels, options = {}) {
  /** @type {Promise<PrenetCoreModule> | undefined} */
  let modulePromise;
  /** @type {Promise<Catalog> | undefined} */
  let catalogPromise;

  /** @type {Promise<ModelRunner | null> | undefined} */
  let modelsPromise;

  function models() {
    modelsPromise ??= loadModels ? loadModels().catch(() => null) : Promise.resolve(null);
    return modelsPromise;
  }

  function core() {
    modulePromise ??= load().catch((error) => {
      modulePromise = undefined;
      throw error;
    });
    return modulePromise;
  }

  /**
   * The catalogue is fixed for a build, so it is parsed once.
   * @returns {Promise<Catalog>}
   */
  function catalog() {
    const { catalogText } = options;
    if (typeof catalogText === 'string') {
      catalogPromise ??= Promise.resolve(/** @type {Catalog} */ (unwrap(catalogText)));
      return catalogPromise;
    }
    catalogPromise ??= core()
      .then((module) => /** @type {Catalog} */ (unwrap(module.catalog())))
      .catch((error) => {
        catalogPromise = undefined;
        throw error;
      });
    return catalogPromise;
  }

  /**
   * The request text, once the catalogue is loaded (the core is then ready for it).
   * @param {PredictRequest | string} request
   */
  async function checkedText(request) {
    await catalog();
    return requestText(request);
  }

  return {
    /** Resolves once the wasm module is loaded; lets callers show "loading" distinctly. */
    ready: () => core().then(() => undefined),

    /**
     * @param {PredictRequest | string} request
     * @returns {Promise<PredictResponse>} rejects with PrenetError for a bad request
     */
    async predict(request) {
      const [module, runner] = await Promise.all([core(), models()]);
      const text = await checkedText(request);
      return runner ? predictLearned(module, runner, text) : unwrap(module.predict(text));
    },

    /**
     * The analytic predictor alone (the named baseline), whatever models are loaded.
     * @param {PredictRequest | string} request
     * @returns {Promise<PredictResponse>}
     */
    async predictRoofline(request) {
      const module = await core();
      return unwrap(module.predict(await checkedText(request)));
    },

    /**
     * Plan mode (docs/API.md, "Plan"): the layouts that fit, ranked by time and by cost. The core
     * searches with roofline kernel times; with the learned predictors loaded, each accelerator's times
     * are first scaled by its learned / roofline ratio for one micro-batch of one sample on one GPU.
     * @param {object | string} request
     * @returns {Promise<any>}
     */
    async plan(request) {
      const [module, runner] = await Promise.all([core(), models()]);
      if (!module.plan) throw new PrenetError('request', 'request: this build of the core has no plan mode');
      const text = await checkedText(/** @type {any} */ (request));
      /** @type {any} */
      let doc;
      try {
        doc = JSON.parse(text);
      } catch {
        return unwrap(module.plan(text));
      }
      if (!runner || doc === null || typeof doc !== 'object' || Array.isArray(doc) || doc.plan?.time_scale !== undefined) {
        return unwrap(module.plan(text));
      }
      const { plan: _plan, parallel: _parallel, ...rest } = doc;
      const base = JSON.stringify({
        ...rest,
        training: { ...(rest.training ?? {}), batch_size: 1 },
        options: { per_layer: false },
      });
      const roofline = unwrap(module.predict(base));
      const learned = await predictLearned(module, runner, base);
      // Kept within the range the core accepts for plan.time_scale.
      const { min, max } = (await catalog()).plan_limits.time_scale;
      /** @type {Record<string, number>} */
      const scale = {};
      roofline.results.forEach((/** @type {any} */ r, /** @type {number} */ i) => {
        const l = learned.results[i];
        if (l && r.step_ms > 0) scale[r.hardware] = Math.min(max, Math.max(min, l.step_ms / r.step_ms));
      });
      return unwrap(module.plan(JSON.stringify({ ...doc, plan: { ...(doc.plan ?? {}), time_scale: scale } })));
    },

    catalog,
  };
}

/** @typedef {ReturnType<typeof createEngine>} Engine */
