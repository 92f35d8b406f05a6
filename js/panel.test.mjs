// Tests of the entry module and its styles (run with `node --test js/`).
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import panel from "./panel.js";

test("default export is an anywidget module with render()", () => {
  assert.equal(typeof panel.render, "function");
});

test("the styles are in panel.css, not in the module", () => {
  const css = readFileSync(new URL("./panel.css", import.meta.url), "utf8");
  const modules = [
    "panel", "base/format", "base/geometry", "charts/bqplot_adapter", "base/dom", "panel/panel_dom",
    "panel/kernel", "charts/hover", "panel/runs", "charts/zoom", "base/zoom_range",
  ];
  const js = modules
    .map((name) => readFileSync(new URL(`./${name}.js`, import.meta.url), "utf8"))
    .join("\n");
  // Each selector heads a rule of its own or shares one ("a, b {").
  const rules = css.replace(/\/\*[\s\S]*?\*\//g, "");
  const heads = rules.match(/[^{}]+(?=\{)/g).flatMap((h) => h.split(",").map((s) => s.trim()));
  for (const selector of [".jhw-panel", ".jhw-liveplot", ".jhw-hover", ".jhw-hover-dot"]) {
    assert.ok(heads.includes(selector), selector);
  }
  assert.equal(css.split("{").length, css.split("}").length, "unbalanced braces");
  assert.ok(!js.includes('element("style")') && !js.includes("border-radius"));
});
