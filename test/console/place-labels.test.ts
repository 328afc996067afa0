import assert from 'node:assert/strict';
import { test } from 'node:test';
import { boxesOverlap, labelWidth, placeLabels, segmentToBox, type Segment } from '../../console/src/place-labels.ts';

test('segmentToBox: 0 when the segment crosses the box, else the shortest distance', () => {
  const box = { x: 10, y: 10, width: 20, height: 10 };
  assert.equal(segmentToBox({ x1: 0, y1: 15, x2: 50, y2: 15, clearance: 0 }, box), 0);
  assert.equal(segmentToBox({ x1: 0, y1: 0, x2: 50, y2: 0, clearance: 0 }, box), 10);
  assert.equal(segmentToBox({ x1: 40, y1: 0, x2: 40, y2: 40, clearance: 0 }, box), 10);
});

test('placeLabels: a label moves off a leg that runs through its first choice, and two close nodes get boxes that do not overlap', () => {
  // A leg running right from the node: the label's preferred place (to the right) is on it.
  const leg: Segment = { x1: 100, y1: 100, x2: 300, y2: 100, clearance: 10 };
  const [box] = placeLabels([{ x: 100, y: 100, radius: 12, width: labelWidth('depot'), height: 16 }], { segments: [leg], circles: [] }, { width: 600, height: 400 });
  assert.ok(segmentToBox(leg, box!) >= leg.clearance, JSON.stringify(box));

  const nodes = [{ x: 200, y: 200 }, { x: 214, y: 204 }, { x: 205, y: 220 }];
  const boxes = placeLabels(
    nodes.map((n) => ({ ...n, radius: 12, width: labelWidth('stop-name'), height: 16 })),
    { segments: [], circles: nodes.map((n) => ({ ...n, r: 12 })) },
    { width: 600, height: 400 },
  );
  for (let i = 0; i < boxes.length; i++) for (let j = i + 1; j < boxes.length; j++) assert.ok(!boxesOverlap(boxes[i]!, boxes[j]!), `${i} and ${j}`);
});

test('placeLabels: a label at the map edge stays inside it when it can', () => {
  const [box] = placeLabels([{ x: 595, y: 5, radius: 11, width: 60, height: 16 }], { segments: [], circles: [] }, { width: 600, height: 400 });
  assert.ok(box!.x >= 0 && box!.y >= 0 && box!.x + box!.width <= 600 && box!.y + box!.height <= 400, JSON.stringify(box));
});
