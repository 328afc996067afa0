import { Option } from 'commander';

/** The hardware substrate's flags, the same on `svc serve` and `svc hosted` (src/quantum/hardware/hardware-config.ts). */
export function hardwareOptions(): Option[] {
  return [
    new Option('--quantum-provider <url>', 'job API of a quantum hardware provider for substrate vendor-eagle (IBM Quantum Runtime shape), e.g. https://quantum.cloud.ibm.com/api/v1; token in SVC_QUANTUM_TOKEN [default: none, vendor-eagle answers 503]').env('SVC_QUANTUM_PROVIDER'),
    new Option('--quantum-backend <name>', 'the provider\'s backend to run on, e.g. ibm_brisbane (needed with --quantum-provider)').env('SVC_QUANTUM_BACKEND'),
    new Option('--quantum-instance <crn>', 'sent as Service-CRN (IBM Cloud instance) [default: not sent]').env('SVC_QUANTUM_INSTANCE'),
    new Option('--quantum-api-version <date>', 'sent as IBM-API-Version, e.g. 2025-05-01 [default: not sent]').env('SVC_QUANTUM_API_VERSION'),
    new Option('--quantum-timeout <duration>', 'longest wait for one hardware job, the provider\'s queue included; then it is cancelled and the solve answers 504 [default: 10m]').env('SVC_QUANTUM_TIMEOUT'),
    new Option('--quantum-deadline <duration>', 'longest a hardware solve (each batch item) may take in all: waiting for the hardware lane, the local solve, its provider jobs; then its job is cancelled and it answers 504 [default: 30m]').env('SVC_QUANTUM_DEADLINE'),
    new Option('--quantum-poll <duration>', 'first wait between job status polls; doubles up to 15s [default: 2s]').env('SVC_QUANTUM_POLL'),
  ];
}
