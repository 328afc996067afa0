import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { counterDeltaUj, findRaplZones, RaplMeter } from '../../../src/hosted/routing/rapl-meter.ts';

let root: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'svc-powercap-'));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

/** A zone directory laid out as the kernel's powercap driver does. */
function zone(dir: string, name: string, energyUj: number, maxUj = 262_143_328_850): void {
  mkdirSync(join(root, dir), { recursive: true });
  writeFileSync(join(root, dir, 'name'), `${name}\n`);
  writeFileSync(join(root, dir, 'energy_uj'), `${energyUj}\n`);
  writeFileSync(join(root, dir, 'max_energy_range_uj'), `${maxUj}\n`);
}

function setEnergy(dir: string, energyUj: number): void {
  writeFileSync(join(root, dir, 'energy_uj'), `${energyUj}\n`);
}

describe('RAPL', () => {
  it('finds package zones only (sub-zones and psys would count twice)', () => {
    zone('intel-rapl:0', 'package-0', 1);
    zone('intel-rapl:0:0', 'core', 1);
    zone('intel-rapl:1', 'package-1', 1);
    zone('intel-rapl:2', 'psys', 1);
    writeFileSync(join(root, 'intel-rapl'), '');
    assert.deepEqual(findRaplZones(root)?.map((z) => z.name), ['package-0', 'package-1']);
  });

  it('is absent where there is no powercap, no package zone, or an unreadable counter', () => {
    assert.equal(RaplMeter.open(join(root, 'missing')), null);
    zone('intel-rapl:0:0', 'core', 1);
    assert.equal(RaplMeter.open(root), null);
    zone('intel-rapl:0', 'package-0', 1);
    writeFileSync(join(root, 'intel-rapl:0', 'energy_uj'), 'garbage');
    assert.equal(RaplMeter.open(root), null);
  });

  it('reports null, not an invented number, when the counter becomes unreadable mid-request', () => {
    zone('intel-rapl:0', 'package-0', 1_000_000);
    const meter = RaplMeter.open(root);
    assert.ok(meter !== null);
    const m = meter.begin();
    rmSync(join(root, 'intel-rapl:0', 'energy_uj'));
    assert.equal(m.end(), null);
  });

  it('does not read a root-only counter (the default since Linux 5.10)', { skip: process.getuid?.() === 0 ? 'root reads anything' : false }, () => {
    zone('intel-rapl:0', 'package-0', 1);
    chmodSync(join(root, 'intel-rapl:0', 'energy_uj'), 0o000);
    assert.equal(RaplMeter.open(root), null);
  });

  it('handles the counter wrapping at max_energy_range_uj', () => {
    assert.equal(counterDeltaUj(100, 250, 1000), 150);
    assert.equal(counterDeltaUj(900, 50, 1000), 150);
    zone('intel-rapl:0', 'package-0', 999_000_000, 1_000_000_000);
    const meter = RaplMeter.open(root)!;
    const m = meter.begin();
    setEnergy('intel-rapl:0', 2_500_000); // wrapped: 1 J to the top, then 2.5 J
    assert.equal(m.end(), 3.5);
  });

  it('sums packages and splits each interval equally among the requests running in it', () => {
    zone('intel-rapl:0', 'package-0', 0);
    zone('intel-rapl:1', 'package-1', 0);
    const meter = RaplMeter.open(root)!;
    const a = meter.begin();
    setEnergy('intel-rapl:0', 3_000_000);
    setEnergy('intel-rapl:1', 1_000_000); // 4 J with only a running
    const b = meter.begin();
    setEnergy('intel-rapl:0', 7_000_000);
    setEnergy('intel-rapl:1', 3_000_000); // 6 J more, a and b both running: 3 J each
    assert.equal(a.end(), 7);
    setEnergy('intel-rapl:0', 9_000_000); // 2 J with only b
    assert.equal(b.end(), 5);
    assert.equal(a.end(), 7, 'ending twice gives the same answer');
    // Energy spent while nothing is measured belongs to no request.
    setEnergy('intel-rapl:0', 50_000_000);
    const c = meter.begin();
    setEnergy('intel-rapl:0', 50_500_000);
    assert.equal(c.end(), 0.5);
  });
});
