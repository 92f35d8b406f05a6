// The look table's examples, checked against the panel's formats (run with `node --test js/`).
// pytest checks the same examples against the Python side (tests/ui/look/), so the widget, the
// live figure and the static picture write numbers and statuses alike.
import assert from "node:assert/strict";
import { test } from "node:test";

import { badgeText, formatCount, formatDuration, formatValue, laneSummary } from "./format.js";
import { LOOK } from "./look.js";

const CASES = {
  value: formatValue,
  count: formatCount,
  duration: formatDuration,
  badge: (status, diverged) => badgeText(status, diverged),
  lanes: (counts, names) => laneSummary(counts, names),
};

for (const [kind, format] of Object.entries(CASES)) {
  test(`the look table's ${kind} examples read as the table says`, () => {
    const examples = LOOK.examples[kind];
    assert.ok(examples.length > 0, `no ${kind} examples`);
    for (const example of examples) {
      const expected = example.at(-1);
      assert.equal(format(...example.slice(0, -1)), expected, JSON.stringify(example));
    }
  });
}

test("every example kind of the table is checked here", () => {
  assert.deepEqual(Object.keys(LOOK.examples).sort(), Object.keys(CASES).sort());
});
