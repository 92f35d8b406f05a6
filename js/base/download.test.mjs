// Tests of a chart's downloads: the request, the answer read, the PNG's name and size (run with
// `node --test js/`).
import assert from "node:assert/strict";
import { test } from "node:test";

import { DOWNLOADS, downloadRequest, pngName, readDownload, svgSize } from "./download.js";

test("a PNG is asked for as the SVG picture; CSV and SVG as themselves", () => {
  assert.deepEqual(downloadRequest(7, "loss", "csv"), { id: 7, chart: "loss", format: "csv" });
  assert.deepEqual(downloadRequest(8, "", "svg"), { id: 8, chart: "", format: "svg" });
  assert.deepEqual(downloadRequest(9, "w", "png"), { id: 9, chart: "w", format: "svg" });
  assert.throws(() => downloadRequest(1, "w", "pdf"));
  assert.deepEqual(DOWNLOADS.map((d) => d.format), ["csv", "svg", "png"]);
});

test("an answer's file is its first buffer, whatever view of the bytes it comes as", () => {
  const bytes = new TextEncoder().encode("run,step\n");
  const content = { jhw_download: 3, name: "p-loss.csv", mime: "text/csv", error: "" };
  for (const buffer of [bytes.buffer, new DataView(bytes.buffer), bytes]) {
    const got = readDownload(content, [buffer]);
    assert.equal(got.id, 3);
    assert.equal(got.name, "p-loss.csv");
    assert.equal(got.mime, "text/csv");
    assert.equal(got.error, "");
    assert.deepEqual([...got.bytes], [...bytes]);
  }
});

test("an answer with an error, or without its file, says why and carries no bytes", () => {
  const big = readDownload({ jhw_download: 4, error: "too large: live.to_csv(path)" }, []);
  assert.equal(big.error, "too large: live.to_csv(path)");
  assert.equal(big.bytes, null);
  const empty = readDownload({ jhw_download: 5, name: "a.csv", error: "" }, []);
  assert.equal(empty.error, "the kernel sent no file");
});

test("other messages are no download's answer", () => {
  assert.equal(readDownload({ method: "update" }, []), null);
  assert.equal(readDownload(null, []), null);
  assert.equal(readDownload("text", []), null);
});

test("the PNG is named after the SVG and sized by its root element", () => {
  assert.equal(pngName("my_plot.svg"), "my_plot.png");
  assert.equal(pngName("liveplot"), "liveplot.png");
  const svg = '<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg" width="720" height="406" viewBox="0 0 720 406"><rect/></svg>';
  assert.deepEqual(svgSize(svg), { width: 720, height: 406 });
  assert.deepEqual(svgSize('<svg viewBox="0 0 300 150"></svg>'), { width: 300, height: 150 });
  assert.equal(svgSize('<svg width="100%"></svg>'), null);
  assert.equal(svgSize("<html></html>"), null);
});
