import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { GpuEnergyMeter, nvidiaSmiReader } from '../../../src/app/nodes/gpu-energy-meter.ts';

function dir(t: TestContext): string {
  const path = mkdtempSync(join(tmpdir(), 'svc-gpu-meter-'));
  t.after(() => rmSync(path, { recursive: true, force: true }));
  return path;
}

/** Sets the counter file to `mj` millijoules, replaced whole as an exporter must. */
function setCounter(file: string, mj: number | string): void {
  writeFileSync(`${file}.next`, `${mj}\n`);
  renameSync(`${file}.next`, file);
}

test('counter file: each interval is split equally among the requests running in it', async (t) => {
  const file = join(dir(t), 'energy');
  setCounter(file, 1000);
  const meter = (await GpuEnergyMeter.open({ SVC_GPU_ENERGY_COUNTER_FILE: file }))!;
  assert.equal(meter.source, 'counter-file');
  const first = meter.begin();
  // Wait for each reading to be taken before the counter moves (end() resolves after its reading).
  await meter.begin().end();
  setCounter(file, 5000); // 4 J while first runs alone (the probe above took no share: its interval was 0).
  const second = meter.begin();
  const probe = meter.begin();
  await probe.end(); // the reading at 5000 is taken; probe ends with the 0 J since.
  setCounter(file, 9000); // 4 J while first and second run: 2 J each.
  assert.equal(await second.end(), 2);
  setCounter(file, 10000); // 1 J, first alone.
  assert.equal(await first.end(), 7);
});

test('one GPU line summed per reading; a failed reading loses the requests across it, and measuring resumes', async (t) => {
  const file = join(dir(t), 'energy');
  setCounter(file, '100\n200');
  const meter = (await GpuEnergyMeter.open({ SVC_GPU_ENERGY_COUNTER_FILE: file }))!;
  const lost = meter.begin();
  await meter.begin().end();
  setCounter(file, '[N/A]');
  assert.equal(await lost.end(), null, 'unknown, never invented');
  setCounter(file, '1300\n1300');
  const next = meter.begin();
  await meter.begin().end();
  setCounter(file, '2300\n2300');
  assert.equal(await next.end(), 2);
});

test('no counter: no meter', async (t) => {
  assert.equal(await GpuEnergyMeter.open({ SVC_GPU_ENERGY_COUNTER_FILE: join(dir(t), 'absent') }), null);
  const file = join(dir(t), 'energy');
  setCounter(file, 'garbage');
  assert.equal(await GpuEnergyMeter.open({ SVC_GPU_ENERGY_COUNTER_FILE: file }), null);
});

test('nvidia-smi: energy.consumed in millijoules, one line per GPU, summed; [N/A] or a failing command is an error', async (t) => {
  const bin = dir(t);
  const smi = join(bin, 'nvidia-smi');
  const fake = (body: string): void => {
    writeFileSync(smi, `#!/bin/sh\n[ "$1" = "--query-gpu=energy.consumed" ] && [ "$2" = "--format=csv,noheader,nounits" ] || exit 9\n${body}\n`);
    chmodSync(smi, 0o755);
  };
  fake('printf "123456\\n654321\\n"');
  assert.equal(await nvidiaSmiReader(smi)(), 777777);
  fake('echo "[N/A]"');
  await assert.rejects(nvidiaSmiReader(smi)());
  fake('exit 3');
  await assert.rejects(nvidiaSmiReader(smi)());
  // Found on PATH when no counter file is set: the meter's source is NVML.
  fake('echo 5000');
  const meter = await GpuEnergyMeter.open({ PATH: bin });
  assert.equal(meter?.source, 'nvml');
  assert.equal(await GpuEnergyMeter.open({ PATH: dir(t) }), null, 'no nvidia-smi: no meter');
});
