import { totalmem } from 'node:os';

/** Bytes per amplitude of a state vector (complex128 as two Float64Arrays). */
export const BYTES_PER_AMPLITUDE = 16;
/** Qubit ceiling regardless of memory: 2^30 amplitudes is 16 GiB and hours of gate work. */
export const HARD_MAX_QUBITS = 30;
/** Share of physical memory the simulator may use for state vectors. */
export const MEMORY_FRACTION = 0.5;
/** Absolute byte ceiling, whatever the machine: 16 GiB. */
export const HARD_CEILING_BYTES = 16 * 1024 ** 3;

/**
 * Raised before any allocation when a simulation would not fit the memory budget (or exceeds
 * the hard qubit cap). It stays inside the process: the solver layer maps it to its API error.
 */
export class SimulatorCapacityError extends Error {
  readonly code = 'simulator_capacity_exceeded';
  readonly qubits: number;
  readonly bytesNeeded: number;
  readonly bytesAllowed: number;
  readonly maxQubits: number;

  constructor(qubits: number, bytesNeeded: number, bytesAllowed: number, maxQubits: number, reason?: string) {
    super(
      reason ??
        `A ${qubits}-qubit state vector needs ${formatBytes(bytesNeeded)}, over the simulator budget of ` +
          `${formatBytes(bytesAllowed)}; this machine simulates at most ${maxQubits} qubits.`,
    );
    this.name = 'SimulatorCapacityError';
    this.qubits = qubits;
    this.bytesNeeded = bytesNeeded;
    this.bytesAllowed = bytesAllowed;
    this.maxQubits = maxQubits;
  }
}

function formatBytes(bytes: number): string {
  if (bytes >= 1024 ** 3) return `${(bytes / 1024 ** 3).toFixed(2)} GiB`;
  if (bytes >= 1024 ** 2) return `${(bytes / 1024 ** 2).toFixed(1)} MiB`;
  return `${bytes} B`;
}

/**
 * The simulator's memory budget in bytes: `SVC_SIM_MAX_BYTES` when set (a positive integer),
 * otherwise MEMORY_FRACTION of physical memory, never above HARD_CEILING_BYTES.
 */
export function memoryBudget(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env['SVC_SIM_MAX_BYTES'];
  if (raw !== undefined && raw.trim() !== '') {
    const value = Number(raw);
    if (Number.isFinite(value) && value > 0) return Math.floor(value);
  }
  return Math.min(Math.floor(totalmem() * MEMORY_FRACTION), HARD_CEILING_BYTES);
}

/** Bytes that `copies` state vectors of `qubits` qubits occupy. */
export function stateBytes(qubits: number, copies = 1): number {
  return 2 ** qubits * BYTES_PER_AMPLITUDE * copies;
}

/** The largest qubit count whose `copies` state vectors fit `budgetBytes` (and the hard cap). */
export function maxQubits(copies = 1, budgetBytes = memoryBudget()): number {
  let n = 0;
  while (n < HARD_MAX_QUBITS && stateBytes(n + 1, copies) <= budgetBytes) n++;
  return n;
}

/**
 * Throws SimulatorCapacityError, before anything is allocated, when `copies` state vectors of
 * `qubits` qubits (plus `extraBytes`, e.g. a cost diagonal) exceed the budget or the qubit cap.
 */
export function assertFits(qubits: number, copies = 1, budgetBytes = memoryBudget(), extraBytes = 0): void {
  if (!Number.isInteger(qubits) || qubits < 0) {
    throw new RangeError(`qubit count must be a non-negative integer, got ${qubits}`);
  }
  const needed = stateBytes(qubits, copies) + extraBytes;
  const ceiling = maxQubits(copies, budgetBytes);
  if (qubits > HARD_MAX_QUBITS) {
    throw new SimulatorCapacityError(
      qubits,
      needed,
      budgetBytes,
      ceiling,
      `${qubits} qubits exceeds the simulator's hard limit of ${HARD_MAX_QUBITS} qubits ` +
        `(a state vector would need ${formatBytes(needed)}); this machine simulates at most ${ceiling} qubits.`,
    );
  }
  if (needed > budgetBytes) throw new SimulatorCapacityError(qubits, needed, budgetBytes, ceiling);
}
