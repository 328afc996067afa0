import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Measured energy from Linux RAPL (`/sys/class/powercap/intel-rapl:N`, also what AMD's RAPL
 * driver exposes). Only the package zones (`intel-rapl:N`, named `package-N`) are summed:
 * their sub-zones (core, uncore) are parts of the package and would count twice, and `psys`
 * covers the packages as well.
 *
 * Each counter is microjoules that wraps to 0 after `max_energy_range_uj`; a reading lower
 * than the last one has wrapped once. (Two wraps between readings cannot be told from one:
 * that takes ~ max_energy_range_uj / package power, about 20 minutes at 200 W for the usual
 * 262 kJ range, longer than any hosted request runs between two readings.)
 *
 * Apportioning: the meter reads the counters whenever a measured request starts or ends. The
 * energy of each interval between two readings is split equally among the requests running
 * in it, so each request's share is proportional to its wall time overlapping the others.
 *
 * Nothing here invents a number: when there are no zones, or they cannot be read (since
 * Linux 5.10 energy_uj is root-only by default), the meter is absent or reports null.
 */
export interface RaplZone {
  name: string;
  energyPath: string;
  maxRangeUj: number;
}

export const POWERCAP_ROOT = '/sys/class/powercap';

function readNumber(path: string): number {
  const text = readFileSync(path, 'utf8').trim();
  if (!/^\d+$/.test(text)) throw new Error(`${path}: not a counter`);
  return Number(text);
}

/** The readable package zones under `root`, or null when there are none. */
export function findRaplZones(root = POWERCAP_ROOT): RaplZone[] | null {
  let entries: string[];
  try {
    entries = readdirSync(root);
  } catch {
    return null;
  }
  const zones: RaplZone[] = [];
  for (const entry of entries.filter((e) => /^intel-rapl:\d+$/.test(e)).sort()) {
    const dir = join(root, entry);
    try {
      const name = readFileSync(join(dir, 'name'), 'utf8').trim();
      if (!name.startsWith('package')) continue;
      const energyPath = join(dir, 'energy_uj');
      readNumber(energyPath);
      const maxRangeUj = readNumber(join(dir, 'max_energy_range_uj'));
      if (maxRangeUj <= 0) continue;
      zones.push({ name, energyPath, maxRangeUj });
    } catch {
      // Unreadable (permissions) or malformed: this zone measures nothing we can trust.
      return null;
    }
  }
  return zones.length > 0 ? zones : null;
}

/** Microjoules from `before` to `after` on a counter that wraps at `maxRangeUj`. */
export function counterDeltaUj(before: number, after: number, maxRangeUj: number): number {
  return after >= before ? after - before : after + maxRangeUj - before;
}

export interface RaplMeasurement {
  /** Joules apportioned to this request, or null when the counters stopped being readable. */
  end(): number | null;
}

interface Open {
  microjoules: number;
}

export class RaplMeter {
  readonly zones: readonly RaplZone[];
  #last: number[];
  #open = new Set<Open>();
  #broken = false;

  private constructor(zones: readonly RaplZone[], first: number[]) {
    this.zones = zones;
    this.#last = first;
  }

  /** A meter over the package zones under `root`, or null where RAPL is absent or unreadable. */
  static open(root = POWERCAP_ROOT): RaplMeter | null {
    const zones = findRaplZones(root);
    if (zones === null) return null;
    try {
      return new RaplMeter(zones, zones.map((z) => readNumber(z.energyPath)));
    } catch {
      return null;
    }
  }

  /** Starts measuring one request. */
  begin(): RaplMeasurement {
    this.#tick();
    const open: Open = { microjoules: 0 };
    this.#open.add(open);
    let ended: number | null | undefined;
    return {
      end: () => {
        if (ended !== undefined) return ended;
        this.#tick();
        this.#open.delete(open);
        ended = this.#broken ? null : Math.round(open.microjoules) / 1e6;
        return ended;
      },
    };
  }

  /** Reads the counters and splits the energy since the last reading among the open requests. */
  #tick(): void {
    if (this.#broken) return;
    let now: number[];
    try {
      now = this.zones.map((z) => readNumber(z.energyPath));
    } catch {
      this.#broken = true;
      return;
    }
    let delta = 0;
    this.zones.forEach((zone, i) => {
      delta += counterDeltaUj(this.#last[i] ?? now[i]!, now[i]!, zone.maxRangeUj);
    });
    this.#last = now;
    if (this.#open.size === 0) return;
    const share = delta / this.#open.size;
    for (const open of this.#open) open.microjoules += share;
  }
}
