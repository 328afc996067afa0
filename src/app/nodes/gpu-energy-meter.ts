import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';

/**
 * Measured energy on an accelerator node: the GPUs' cumulative energy counters, apportioned among
 * the requests the node serves the way the gateway apportions RAPL (src/hosted/routing/rapl-meter.ts):
 * the counters are read whenever a measured request starts or ends, and the energy of each interval
 * between two readings is split equally among the requests running in it.
 *
 * Where the counter comes from, first that works:
 * - `SVC_GPU_ENERGY_COUNTER_FILE`: a file holding cumulative millijoules (one number per line,
 *   summed: one per GPU). For a counter exported by another agent (DCGM exporter, a sidecar), and
 *   for tests, which have no GPU.
 * - `nvidia-smi --query-gpu=energy.consumed --format=csv,noheader,nounits`: NVML's total energy
 *   consumption (nvmlDeviceGetTotalEnergyConsumption), millijoules since the driver was loaded,
 *   one line per GPU (Volta and newer). `[N/A]` or `[Not Supported]` on any GPU → no meter.
 *
 * Reads are asynchronous (nvidia-smi takes tens of milliseconds) and run one at a time, in order.
 * Nothing is invented: no counter → no meter; a read that fails → the requests running across it
 * get null (their interval is unknown), and measuring resumes from the next good reading.
 */
export type EnergySource = 'nvml' | 'counter-file';

export type CounterReader = () => Promise<number>;

function sumMillijoules(text: string, what: string): number {
  const lines = text.split('\n').map((l) => l.trim()).filter((l) => l !== '');
  if (lines.length === 0 || !lines.every((l) => /^\d+(\.\d+)?$/.test(l))) throw new Error(`${what}: not a millijoule counter`);
  return lines.reduce((sum, l) => sum + Number(l), 0);
}

export function counterFileReader(path: string): CounterReader {
  return async () => sumMillijoules(await readFile(path, 'utf8'), path);
}

/** `command` is looked up on `env`'s PATH. */
export function nvidiaSmiReader(command = 'nvidia-smi', env: NodeJS.ProcessEnv = process.env): CounterReader {
  return () => new Promise((resolve, reject) => {
    execFile(command, ['--query-gpu=energy.consumed', '--format=csv,noheader,nounits'], { timeout: 5000, env }, (error, stdout) => {
      if (error !== null) reject(error);
      else {
        try {
          resolve(sumMillijoules(stdout, 'nvidia-smi energy.consumed'));
        } catch (e) {
          reject(e as Error);
        }
      }
    });
  });
}

interface Open {
  millijoules: number;
  /** A reading failed while it ran: its share is unknown. */
  lost: boolean;
}

export interface GpuMeasurement {
  /** Joules apportioned to this request, or null when the counter stopped being readable. */
  end(): Promise<number | null>;
}

export class GpuEnergyMeter {
  readonly source: EnergySource;
  readonly #read: CounterReader;
  #last: number | undefined;
  #open = new Set<Open>();
  /** Readings run one after another, so intervals never overlap. */
  #queue: Promise<void> = Promise.resolve();

  private constructor(source: EnergySource, read: CounterReader, first: number) {
    this.source = source;
    this.#read = read;
    this.#last = first;
  }

  /** The meter for this machine, or null where no counter can be read. */
  static async open(env: NodeJS.ProcessEnv = process.env): Promise<GpuEnergyMeter | null> {
    const file = env.SVC_GPU_ENERGY_COUNTER_FILE;
    const [source, read]: [EnergySource, CounterReader] = file !== undefined && file !== '' ? ['counter-file', counterFileReader(file)] : ['nvml', nvidiaSmiReader('nvidia-smi', env)];
    try {
      return new GpuEnergyMeter(source, read, await read());
    } catch {
      return null;
    }
  }

  #tick(change?: () => void): Promise<void> {
    this.#queue = this.#queue.then(async () => {
      try {
        const now = await this.#read();
        if (this.#last === undefined || now < this.#last) {
          // After a failed reading, or a counter that went back (the driver was reloaded): that interval is unknown.
          for (const open of this.#open) open.lost = true;
        } else if (this.#open.size > 0) {
          const share = (now - this.#last) / this.#open.size;
          for (const open of this.#open) open.millijoules += share;
        }
        this.#last = now;
      } catch {
        this.#last = undefined;
        for (const open of this.#open) open.lost = true;
      }
      change?.();
    });
    return this.#queue;
  }

  /** Starts measuring one request (its share counts from the reading this queues). */
  begin(): GpuMeasurement {
    const open: Open = { millijoules: 0, lost: false };
    const started = this.#tick(() => this.#open.add(open));
    let ended: Promise<number | null> | undefined;
    return {
      end: () => {
        ended ??= started.then(() => this.#tick(() => this.#open.delete(open))).then(() => (open.lost ? null : Math.round(open.millijoules) / 1000));
        return ended;
      },
    };
  }
}
