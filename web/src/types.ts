// Types for the JSON contract in docs/API.md. Type-only: nothing here exists at run time, so the
// plain-JS engine (engine.js) and the CLI can refer to these through JSDoc `import('./types')`.

export type Precision = 'fp32' | 'tf32' | 'fp16' | 'bf16' | 'fp8';
/** Attention's core: eager kernels, the fused kernel the framework picks per part, or FlashAttention-2 everywhere. */
export type AttentionKernel = 'eager' | 'flash' | 'flash2';
/** Whose kernels run the layers: PyTorch's operations as Hugging Face writes them, or Megatron-LM's fused ones. */
export type KernelSet = 'pytorch' | 'megatron';
/** The optimizer's update: one fused pass per state, or torch.optim's default multi-tensor foreach ops. */
export type OptimizerImpl = 'fused' | 'foreach';
/** How convolution tensors lie in memory; absent, convolutions are timed as channels_last (docs/PREDICTION.md). */
export type MemoryFormat = 'channels_last' | 'nchw';
export type Optimizer =
  | 'none'
  | 'sgd'
  | 'momentum'
  | 'adam'
  | 'adamw'
  | 'adagrad'
  | 'adadelta'
  | 'rmsprop';

/** A JSON object whose shape the core checks (HF config.json, a layer, an input description). */
export type JsonObject = { [key: string]: unknown };

// ---------------------------------------------------------------- request

export type ModelSpec =
  | { preset: string; name?: string }
  | { hf_config: JsonObject; name?: string }
  | { keras: JsonObject | string; name?: string }
  | { onnx_base64: string; name?: string }
  | { layers: JsonObject[]; input: JsonObject; name?: string };

export interface TrainingSpec {
  batch_size?: number;
  seq_len?: number;
  image_size?: number;
  precision?: Precision;
  optimizer?: Optimizer;
  /** How attention's core runs: score matrices in memory (eager) or one fused kernel per pass (flash). */
  attention?: AttentionKernel;
  kernels?: KernelSet;
  optimizer_impl?: OptimizerImpl;
  memory_format?: MemoryFormat;
  dataset_size?: number;
  epochs?: number;
  finetune?: FinetuneSpec;
  /** Multi-token prediction depths (DeepSeek-V3; Megatron-Core's mtp_num_layers); absent: none. */
  mtp_layers?: number;
}

/** The request's `training.finetune` (docs/API.md): what trains, and the adapters' shape. */
export interface FinetuneSpec {
  method?: 'full'|'lora'|'qlora'|'freeze';
  rank?: number;
  alpha?: number;
  dropout?: number;
  targets?: string[]|string;
  base_precision?: 'fp32'|'bf16'|'fp16'|'int8'|'nf4';
  trainable_layers?: number;
  /** Frozen weights in blocks that also train get gradients, as FSDP1's mixed units build them. */
  frozen_gradients?: boolean;
}

export interface CustomAccelerator {
  name?: string;
  id?: string;
  peak_tflops: { fp32: number } & Partial<Record<Precision, number>>;
  memory_bandwidth_gbs: number;
  memory_gb: number;
  price_per_hour_usd?: number;
  /** Measured achievable matrix TFLOP/s by precision, at most the peak (docs/HARDWARE.md). */
  achievable_tflops?: Partial<Record<Precision, number>>;
}

/** A catalogue id (see `prenet hardware`) or a custom accelerator. */
export type HardwareRef = string | CustomAccelerator;

export interface PredictRequest {
  model: ModelSpec;
  training?: TrainingSpec;
  hardware?: HardwareRef[];
  options?: { per_layer?: boolean };
  /** A step time measured on one of the requested accelerators; predictions are corrected by it. */
  calibration?: { hardware: string; step_ms: number };
  /** Training on more than one accelerator (docs/API.md, "parallel"). */
  parallel?: ParallelSpec;
}

/** A link between accelerators; omitted fields come from the catalogue. */
export interface LinkSpec {
  kind?: string;
  bandwidth_gbs?: number;
  latency_us?: number;
}

/** Megatron-Core's modules of selective recomputation (parallel.recompute_modules). */
export type RecomputeModule = 'core_attn' | 'moe_act' | 'layernorm' | 'mla_up_proj' | 'mlp' | 'moe' | 'shared_experts';

export interface ParallelSpec {
  gpus?: number;
  data?: number;
  tensor?: number;
  pipeline?: number;
  micro_batch_size?: number;
  micro_batches?: number;
  /** With recompute full: checkpoint every n-th block only (1: all). */
  recompute_every?: number;
  /** ZeRO/FSDP ≥ 2 with several micro-batches: gradients held unsharded until the step's reduce-scatter (no_sync). */
  accumulate_unsharded?: boolean;
  /** Megatron's pipeline split counting the embedding and the loss as one layer each (pipeline > 1). */
  pipeline_embedding_loss?: boolean;
  /** Megatron-Core's pipeline_model_parallel_layout, e.g. "Et*4|(t*4|)*14tmL": each chunk's layers (E, t, m, L). */
  pipeline_layout?: string;
  /** ZeRO 1/2: the updated weights' gather behind the next step's first forward (Megatron --overlap-param-gather). */
  overlap_param_gather?: boolean;
  /** Megatron-Core's --overlap-moe-expert-parallel-comm: expert all-to-alls behind another micro-batch's compute. */
  expert_overlap?: boolean;
  /** TransformerEngine userbuffers: tensor-parallel collectives behind their GEMMs (needs sequence_parallel). */
  tensor_overlap?: boolean;
  /** Expert all-to-alls: NCCL's flat one, or DeepEP's / HybridEP's hierarchical (one copy per destination node). */
  expert_dispatch?: 'alltoall' | 'hierarchical';
  zero_stage?: 0 | 1 | 2 | 3;
  fsdp?: boolean;
  recompute?: 'none' | 'selective' | 'full' | 'ops';
  /** With recompute selective: Megatron-Core's modules to recompute (absent: ["core_attn"]). */
  recompute_modules?: RecomputeModule | RecomputeModule[];
  /** Megatron sequence parallelism over the tensor group (no effect at tensor 1). */
  sequence_parallel?: boolean;
  gpus_per_node?: number;
  intra_node?: LinkSpec;
  inter_node?: LinkSpec;
}

/** The Plan mode (docs/API.md, "Plan"): layouts for a training budget, searched and ranked by the core. */
export interface PlanSpec {
  tokens?: number;
  samples?: number;
  max_gpus?: number;
  min_gpus?: number;
  /** How many layouts per accelerator and ranking (default 10). */
  top?: number;
  /** Per accelerator id: the factor on the roofline's compute times (learned / roofline step). */
  time_scale?: Record<string, number>;
}

export interface PlanRequest {
  model: ModelSpec;
  training?: TrainingSpec;
  hardware?: HardwareRef[];
  /** Only the fabric (gpus_per_node, intra_node, inter_node): the layouts are what the plan searches. */
  parallel?: Pick<ParallelSpec, 'gpus_per_node' | 'intra_node' | 'inter_node'>;
  plan: PlanSpec;
}

// ---------------------------------------------------------------- response

export interface FlopsPerStep {
  forward: number;
  backward: number;
  optimizer: number;
  total: number;
}

export interface ModelInput {
  kind: string; // "tokens" | "image" | ... — the core decides; shown as-is
  seq_len?: number;
  image_size?: number;
  channels?: number;
  [key: string]: unknown;
}

/**
 * How a Hugging Face config was read (docs/API.md "model.reading"): by its model_type's row of the table, or
 * generically (the model_type has no row) from the fields named in `relied_on`.
 */
export type ModelReading =
  | { kind: 'table'; model_type: string }
  | { kind: 'generic'; model_type: string; style: 'llama' | 'gpt2'; relied_on: string[] };

export interface ModelSummary {
  name: string;
  source: string; // "preset" | "hf_config" | "architecture" | "keras" | "onnx_base64" | "layers"
  parameters: number;
  active_parameters?: number; // a token's parameters (mixture of experts: top_k of the experts); only when it differs
  layer_count: number;
  input: ModelInput;
  flops_per_step: FlopsPerStep;
  /** Present when the model came as hf_config. */
  reading?: ModelReading;
  /**
   * The architecture form (docs/MODEL_FORMAT.md "Architecture form"): present when the model was read from a
   * config of a family the form has (hf_config, or a preset built from one) or came as `architecture`.
   */
  architecture?: { family: string; name: string; layers?: Array<Record<string, unknown>>; [key: string]: unknown };
}

export interface TrainingSummary {
  batch_size: number;
  seq_len?: number;
  image_size?: number;
  precision: Precision;
  optimizer: Optimizer;
  optimizer_impl: OptimizerImpl;
  attention: AttentionKernel;
  kernels: KernelSet;
  /** Present only when the request gave it. */
  memory_format?: MemoryFormat;
  /** Present when the config's dtype set the precision ("model.hf_config.torch_dtype"). */
  precision_from?: string;
  /** Present when the config's positions set the length (the request gave none). */
  seq_len_from?: string;
  dataset_size: number;
  epochs: number;
  steps_per_epoch: number;
  /** The fine-tune as the core read it (its defaults filled in), when the core echoes it. */
  finetune?: FinetuneSpec;
}

export interface Phases {
  forward: number;
  backward: number;
  optimizer: number;
}

export interface LayerInfo {
  name: string;
  type: string;
  output_shape: number[];
  parameters: number;
  flops: Phases;
  bytes: Phases;
  features: { co: number; cm: number };
  kernels?: number;
  intensity?: number;
  /** The column of every result's per-layer `layers` that holds this layer's timings. */
  timing: number;
}

/** `input`: the step waits for the input pipeline (training.input_rate); the others: the kernels' dominant term. */
export type Bottleneck = 'compute' | 'memory' | 'overhead' | 'input';

/**
 * A result's per-layer timings, by column (docs/API.md): layers with the same timings on every
 * accelerator share a column, and the top-level table's `layers[i].timing` says which is layer i's.
 */
export interface LayerColumns {
  forward_ms: number[];
  backward_ms: number[];
  optimizer_ms: number[];
  compute_ms: number[];
  memory_ms: number[];
  ct_ms: number[];
  bound: Bottleneck[];
}

/** One layer's timings on one accelerator, read out of the columns (layers.js, layerTimings). */
export interface LayerTiming {
  name: string;
  forward_ms: number;
  backward_ms: number;
  optimizer_ms: number;
  compute_ms: number;
  memory_ms: number;
  ct_ms: number;
  bound: Bottleneck;
}

export interface MemoryBreakdown {
  weights_gb: number;
  gradients_gb: number;
  optimizer_gb: number;
  activations_gb: number;
  /** Communication buffers and gathered weights (parallel training). */
  temporary_gb?: number;
  overhead_gb?: number;
}

export interface Link {
  kind: string;
  bandwidth_gbs: number;
  latency_us: number;
}

type LinkUse = 'intra_node' | 'inter_node' | null;

/** A parallel layout as the core reports it, in results and in plans. */
export interface Layout {
  gpus: number;
  data: number;
  tensor: number;
  pipeline: number;
  micro_batch_size: number;
  micro_batches: number;
  zero_stage: number;
  recompute: string;
  sequence_parallel: boolean;
  /** Present where the core echoes them (issue-18 degrees; 1 when unused). */
  context?: number;
  expert?: number;
  virtual_stages?: number;
}

/** A result's step on several GPUs: compute + exposed communication + pipeline bubble = step_ms. */
export interface ParallelResult extends Layout {
  /** With recompute selective, when not ["core_attn"]: the modules recomputed, in the core's order. */
  recompute_modules?: RecomputeModule[];
  /** parallel.pipeline_layout as given, when given. */
  pipeline_layout?: string;
  /** parallel.expert_dispatch, when hierarchical. */
  expert_dispatch?: 'hierarchical';
  compute_ms: number;
  /** Exposed communication by kind; `context` and `expert` where the layout has them. */
  communication_ms: { data: number; tensor: number; pipeline: number; zero: number } & Record<string, number>;
  bubble_ms: number;
  stage_layers?: number[];
  critical_stage?: number;
  links: {
    gpus_per_node: number;
    intra_node: Link;
    inter_node: Link;
    tensor: LinkUse;
    data: LinkUse;
    pipeline: LinkUse;
  };
}

/** One change to the layout after which the fullest GPU fits (docs/API.md, memory_advice). */
export interface MemoryAdvice {
  change: Record<string, number | string | boolean>;
  gpus: number;
  memory_gb: number;
}

/** Summed kernel time by what limited each kernel (docs/API.md). */
export interface TimeSplit {
  compute: number;
  memory: number;
  overhead: number;
}

export interface HardwareResult {
  hardware: string;
  name: string;
  custom: boolean;
  /** What timed this accelerator: the learned models, or the roofline for kinds they do not cover (TPU, Gaudi). */
  predictor: 'learned' | 'roofline';
  step_ms: number;
  /** Learned predictor only: the 80% interval of step_ms, [low, high] (docs/PREDICTION.md §6). */
  step_ms_interval?: [number, number];
  /** Learned predictor only: the 80% interval of total_s. */
  total_s_interval?: [number, number];
  /** Learned predictor only: the same step by the other predictors, e.g. `roofline` (the named baseline). */
  baselines?: Record<string, { step_ms: number; forward_ms: number }>;
  forward_ms: number;
  backward_ms: number;
  optimizer_ms: number;
  epoch_s: number;
  total_s: number;
  memory_gb: number;
  memory: MemoryBreakdown;
  device_memory_gb?: number;
  fits: boolean;
  price_per_hour_usd: number | null;
  cost_usd: number | null;
  mfu: number;
  bottleneck: Bottleneck;
  time_split_ms?: TimeSplit;
  /** With training.input_rate: the wait for the input pipeline beyond the rest of the step (0: it keeps up). */
  input_ms?: number;
  /**
   * The host's time to issue each pass's kernels in eager PyTorch (zeros with training.cuda_graphs); a pass takes
   * at least this, and `bottleneck` is `overhead` when it set one.
   */
  host_issue_ms?: { forward: number; backward: number };
  /** With `options.per_layer`: this accelerator's per-layer timings, by column (see LayerColumns). */
  layers?: LayerColumns;
  /** When the request had `calibration`: the factor applied to this accelerator's times. */
  calibration_factor?: number;
  /** With a calibration: the exponent s of its factor f used here (factor = f^s; 1 on the measured accelerator). */
  calibration_share?: number;
  /** With a `parallel` request: the step's parts and the links used. */
  parallel?: ParallelResult;
  /** With a `parallel` request that does not fit: single changes that would. */
  memory_advice?: MemoryAdvice[];
}

export interface PredictResponse {
  version: string;
  predictor: string;
  model: ModelSummary;
  training: TrainingSummary;
  warnings: string[];
  layers?: LayerInfo[];
  results: HardwareResult[];
}

/** One layout the planner found (it fits in memory by construction). */
export interface PlanLayout extends Layout {
  step_ms: number;
  total_s: number;
  cost_usd: number | null;
  memory_gb: number;
  mfu: number;
}

/** The planner's layouts on one accelerator: the fastest and the cheapest. */
export interface PlanAcceleratorResult {
  hardware: string;
  name: string;
  device_memory_gb: number;
  price_per_hour_usd: number | null;
  time_scale: number;
  links: { gpus_per_node: number; intra_node: { kind: string; bandwidth_gbs: number }; inter_node: { kind: string; bandwidth_gbs: number } };
  layouts_considered: number;
  layouts_fitting: number;
  by_time: PlanLayout[];
  /** Empty when the accelerator has no price. */
  by_cost: PlanLayout[];
}

export interface PlanResponse {
  version: string;
  predictor: string;
  model: { name: string; parameters: number; layer_count: number };
  training: {
    batch_size: number;
    precision: Precision;
    optimizer: Optimizer;
    optimizer_impl: OptimizerImpl;
    attention: AttentionKernel;
    kernels: KernelSet;
    memory_format?: MemoryFormat;
    seq_len?: number;
  };
  plan: { samples: number; steps: number; max_gpus: number; min_gpus: number; tokens?: number };
  results: PlanAcceleratorResult[];
}

/** A layout with its accelerator, as the page's ranked table lists it. */
export type PlanRow = PlanLayout & { hardware: string; name: string; device_memory_gb: number };

/** Every failure from the core has this shape (docs/API.md, "Errors never throw"). */
export interface ErrorBody {
  error: { field: string; message: string };
}

// ---------------------------------------------------------------- catalogue

/** A record of core/data/hardware.json; only id and name are relied on, the rest is shown if present. */
export interface HardwareEntry {
  id: string;
  name: string;
  [key: string]: unknown;
}

export interface PresetEntry {
  id: string;
  name: string;
  family: string;
  input: ModelInput;
  parameters: number;
}

/** One training option of the core's table (docs/API.md "Options"): what the page, links, the element and the CLI read. */
export interface CatalogOption {
  /** The member of the request's `training`, e.g. "memory_format"; a section's member is "finetune.rank". */
  key: keyof TrainingSpec|`finetune.${keyof FinetuneSpec}`|(string & {});
  /** Its path in errors, e.g. "training.memory_format". */
  field: string;
  /** names: one name or a list of them (comma-separated in boxes, links and flags); boolean: a switch; text: one string. */
  kind: 'integer'|'number'|'choice'|'names'|'boolean'|'text';
  /** Choices: the accepted names, and how each reads in the page's select. */
  values?: string[];
  labels?: string[];
  /** Numbers: the accepted range. */
  min?: number;
  max?: number;
  /** The core's default; null: none (derived, the model's own, or not modelled). */
  default: string|number|boolean|string[]|null;
  label: string;
  doc: string;
  /** Link parameters, which are also the element's attributes; the first is the one written. */
  link: string[];
  /** The CLI flag ("--memory-format") and its placeholder in --help (null for a switch). */
  flag: string;
  flag_value: string|null;
}

/** A row of the core's table of the request's `parallel` fields (docs/API.md "Parallel options"). */
export interface CatalogParallelOption {
  /** The member of the request's `parallel`, e.g. "tensor"; a link override's is nested: "intra_node.bandwidth_gbs". */
  key: string;
  /** Its path in errors, e.g. "parallel.tensor". */
  field: string;
  /** text (pipeline_layout): one string, in links and a CLI flag, no box on the page. */
  kind: 'integer' | 'number' | 'choice' | 'boolean' | 'names' | 'text';
  /** Choices: the accepted names, and how each reads in the page's select; names (recompute_modules): those accepted. */
  values?: string[];
  labels?: string[];
  /** Numbers: the accepted range. */
  min?: number;
  max?: number;
  /** The core's default; null: none (derived, or the accelerator's). */
  default: string | number | boolean | string[] | null;
  label: string;
  doc: string;
  /** Link parameters (the page's; the element takes none); the first is the one written. Empty: no link. */
  link: string[];
  /** The CLI flag ("--tensor"), null for none; its placeholder in --help, null for a switch. */
  flag: string | null;
  flag_value: string | null;
}

/** A form of the request's `model` (docs/API.md "Model"). */
export interface ModelFormEntry {
  key: 'preset' | 'hf_config' | 'architecture' | 'keras' | 'onnx_base64' | 'layers';
  doc: string;
}

export interface CatalogLimits {
  /** The longest request text the core reads. */
  request_bytes: number;
  json_depth: number;
  accelerators: number;
}

/** Ranges of plan request fields, as plan mode accepts them. */
export interface CatalogPlanLimits {
  /** `plan.time_scale` values (learned / roofline step ratios). */
  time_scale: { min: number; max: number };
}

export interface Catalog {
  version: string;
  hardware: HardwareEntry[];
  presets: PresetEntry[];
  precisions: Precision[];
  optimizers: Optimizer[];
  options: CatalogOption[];
  parallel_options: CatalogParallelOption[];
  model_forms: ModelFormEntry[];
  limits: CatalogLimits;
  plan_limits: CatalogPlanLimits;
}

// ---------------------------------------------------------------- wasm module

/** What `createPrenetCore()` from build/wasm/prenet_core.mjs resolves to (wasm/ owns the binding). */
/** The wasm core; the learned-prediction calls are optional so stand-in modules in tests can omit them. */
export interface PrenetCoreModule {
  predict(requestJson: string): string;
  catalog(): string;
  /**
   * Learned prediction, step 1: validates the request and opens a session; JSON
   * {"session": id, "classes": [{dataset, rows, width}]} or an error (also when 64 sessions are open).
   */
  learnedPrepare?(requestJson: string): string;
  /** Step 2: session `session`'s class i input rows, a view into wasm memory (copy before the next call). */
  learnedFeatures?(session: number, classIndex: number): Float32Array;
  /** Step 3: each class's model outputs, in prepare's order; closes the session and returns the response JSON. */
  learnedFinish?(session: number, outputs: Float32Array[]): string;
  /** Closes a session without a response (its models failed); nothing happens for one not open. */
  learnedRelease?(session: number): void;
  /** Plan mode (docs/API.md, "Plan"): the fitting parallel layouts; JSON text. */
  plan?(requestJson: string): string;
}

/** Runs one learned predictor (an ONNX model) on row-major float32 features [rows x width]. */
export interface ModelRunner {
  run(dataset: string, features: Float32Array, rows: number, width: number): Promise<Float32Array>;
}

/** Emscripten module options we use; `wasmBinary` lets Node skip Emscripten's own file loading. */
export interface PrenetCoreOptions {
  wasmBinary?: ArrayBuffer | Uint8Array;
  locateFile?: (path: string, prefix: string) => string;
}

export type PrenetCoreFactory = (options?: PrenetCoreOptions) => Promise<PrenetCoreModule>;
