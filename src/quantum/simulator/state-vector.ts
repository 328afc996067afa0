import { assertFits } from './memory-guard.ts';

export interface StateVectorOptions {
  /** Back the amplitudes with SharedArrayBuffers so worker threads can work on them in place. */
  shared?: boolean;
  /** Budget override for the memory guard (bytes); defaults to the machine budget. */
  budgetBytes?: number;
}

function allocate(length: number, shared: boolean): Float64Array {
  return shared ? new Float64Array(new SharedArrayBuffer(length * 8)) : new Float64Array(length);
}

/**
 * A dense n-qubit state: 2^n complex amplitudes as split real/imaginary Float64Arrays.
 * Qubit q is bit q of the basis index (little-endian, Qiskit's convention): in |q2 q1 q0>,
 * basis index 0b110 has q1 = q2 = 1.
 */
export class StateVector {
  readonly qubits: number;
  readonly re: Float64Array;
  readonly im: Float64Array;

  /** Wraps existing arrays (length 2^qubits each). Use the static factories to allocate. */
  constructor(qubits: number, re: Float64Array, im: Float64Array) {
    const size = 2 ** qubits;
    if (re.length !== size || im.length !== size) {
      throw new RangeError(`a ${qubits}-qubit state needs arrays of length ${size}`);
    }
    this.qubits = qubits;
    this.re = re;
    this.im = im;
  }

  /** All-zero amplitudes (not a valid state; a buffer to fill). Checks the memory guard first. */
  static allocate(qubits: number, options: StateVectorOptions = {}): StateVector {
    assertFits(qubits, 1, options.budgetBytes);
    const size = 2 ** qubits;
    const shared = options.shared ?? false;
    return new StateVector(qubits, allocate(size, shared), allocate(size, shared));
  }

  /** |0...0>. */
  static zero(qubits: number, options: StateVectorOptions = {}): StateVector {
    const s = StateVector.allocate(qubits, options);
    s.re[0] = 1;
    return s;
  }

  /** |+>^n: every amplitude 2^(-n/2). */
  static uniform(qubits: number, options: StateVectorOptions = {}): StateVector {
    const s = StateVector.allocate(qubits, options);
    s.re.fill(1 / Math.sqrt(s.re.length));
    return s;
  }

  /** Number of amplitudes, 2^qubits. */
  get size(): number {
    return this.re.length;
  }

  /** Whether the amplitudes live in shared memory. */
  get shared(): boolean {
    return this.re.buffer instanceof SharedArrayBuffer;
  }

  clone(options: StateVectorOptions = {}): StateVector {
    const copy = StateVector.allocate(this.qubits, { shared: options.shared ?? this.shared, ...options });
    copy.re.set(this.re);
    copy.im.set(this.im);
    return copy;
  }

  /** Σ|amp|² (1 for a normalised state). */
  norm2(): number {
    const { re, im } = this;
    let sum = 0;
    for (let i = 0; i < re.length; i++) sum += re[i]! * re[i]! + im[i]! * im[i]!;
    return sum;
  }

  /** Amplitude of basis state `index` as [re, im]. */
  amplitude(index: number): [number, number] {
    return [this.re[index] ?? 0, this.im[index] ?? 0];
  }
}
