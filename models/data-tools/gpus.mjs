// The one GPU-name map: every measured device -> a catalogue id in core/data/hardware.json, for the
// training data (models/build-data.mjs) and the accuracy benchmark's validation files
// (web/bench/accuracy/rows.mjs). The reasoning for each choice is in models/data/SOURCES.md ("GPU
// mapping"). A device that is neither mapped nor explicitly excluded is an error: nothing is dropped
// silently.

import { readFileSync } from 'node:fs';

/**
 * NeuSight: the `Device` column (torch.cuda.get_device_name()); its label folders write the same
 * names with underscores for spaces.
 */
export const NEUSIGHT_DEVICES = {
  'Tesla P4': 'p4',
  'Tesla P100-PCIE-16GB': 'p100-pcie-16gb',
  'Tesla T4': 't4',
  'Tesla V100-PCIE-32GB': 'v100-pcie-32gb',
  'NVIDIA A100-PCIE-40GB': 'a100-pcie-40gb',
  'NVIDIA A100-SXM4-40GB': 'a100-sxm4-40gb',
  'NVIDIA A100 80GB PCIe': 'a100-pcie-80gb',
};

/** Justus et al.: the `gpu_name` column. */
export const JUSTUS_DEVICES = {
  K40: 'k40',
  k80: 'k80', // whole-board catalogue entry; TensorFlow used one GK210 die (see SOURCES.md)
  M60: 'm60', // whole-board catalogue entry; one GM204 die was used (see SOURCES.md)
  '1080ti': 'gtx-1080-ti',
  P100: 'p100-pcie-16gb', // Google Cloud nvidia-tesla-p100 (PCIe 16 GB)
  V100: 'v100-sxm2-16gb', // Google Cloud nvidia-tesla-v100 (SXM2 16 GB)
};

/**
 * NVIDIA DeepLearningExamples: the `gpu` column of the validation file e2e-dev.csv. Its tables are
 * "DGX-1 (8x V100 16G/32G)" tables, and DGX-1 carries SXM2 V100s.
 */
export const DLE_DEVICES = {
  'V100 16GB': 'v100-sxm2-16gb',
  'V100 32GB': 'v100-sxm2-32gb',
};

/** DeepBench: the device tag in the sheet's file name, `DeepBench_<tag>__<sheet>.csv`. */
export const DEEPBENCH_DEVICES = {
  NV_M40: 'm40',
  NV_TitanX: 'titan-x-maxwell',
  NV_TitanX_Pascal: 'titan-x-pascal',
  NV_TitanXp: 'titan-xp',
  NV_1080Ti: 'gtx-1080-ti',
  NV_P100: 'p100-pcie-16gb', // workstation board (ASUS X99-E WS) -> PCIe card; 16 GB assumed
  NV_V100: 'v100-sxm2-16gb', // DGX-1 host (2x Xeon E5-2698 v4) -> SXM2; 16/32 GB identical in compute
  NV_T4: 't4',
  AMD_MI25: 'mi25',
  AMD_VegaFE: 'vega-fe',
};

/** DeepBench devices deliberately left out, with the reason counted in the summary. */
export const DEEPBENCH_EXCLUDED = {
  IA_KNL7250: 'excluded: Intel Xeon Phi 7250 (KNL) is a CPU, not in the accelerator catalogue',
};

/** Vidur: the device folder under data/profiling/compute. */
export const VIDUR_DEVICES = {
  a100: 'a100-sxm4-80gb', // A100 80GB; form factor not stated for the compute profiles (assumption)
  a40: 'a40',
  // Not in ../shared/data yet (raw copy staged in models/data/raw/vidur-h100, see SOURCES.md): Vidur's
  // H100 is "H100 DGX" in its README and an 80 GB, 1000-TFLOPS part in its device config -> SXM5
  // (assumption; its docs also name a 4x H100 NVL VM for network profiles only).
  h100: 'h100-sxm',
};

/**
 * Loads the catalogue ids and checks that every id used above exists.
 * @param {string} path
 */
export function loadCatalogueIds(path) {
  const doc = /** @type {{hardware: {id: string}[]}} */ (JSON.parse(readFileSync(path, 'utf8')));
  const ids = new Set(doc.hardware.map((h) => h.id));
  const used = [NEUSIGHT_DEVICES, JUSTUS_DEVICES, DLE_DEVICES, DEEPBENCH_DEVICES, VIDUR_DEVICES].flatMap((m) => Object.values(m));
  const missing = [...new Set(used)].filter((id) => !ids.has(id));
  if (missing.length) {
    throw new Error(`GPU mapping uses ids missing from ${path}: ${missing.join(', ')}`);
  }
  return ids;
}

/**
 * A device's catalogue id in a mapping, or undefined (never an inherited property).
 * @param {Readonly<Record<string, string>>} mapping
 * @param {string} device
 * @returns {string | undefined}
 */
export function deviceId(mapping, device) {
  return Object.hasOwn(mapping, device) ? mapping[device] : undefined;
}

/**
 * Looks a device up in a mapping; throws with the file named when it is unknown.
 * @param {Readonly<Record<string, string>>} mapping
 * @param {string} device
 * @param {string} where
 */
export function mapDevice(mapping, device, where) {
  const id = deviceId(mapping, device);
  if (!id) throw new Error(`${where}: unmapped device "${device}" (add it to models/data-tools/gpus.mjs)`);
  return id;
}
