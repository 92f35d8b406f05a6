// A chart's downloads (pure): what the page asks the kernel for, and how it reads the answer.
// The kernel makes the files (the chart's CSV, the plot's SVG picture: jaxhist_widget/ui/plot/
// _download.py); the page only saves them, and draws the PNG from the SVG itself
// (js/charts/chart_download.js), so that no file ever comes from a server or a CDN.

/** What each entry of a chart's download menu gives: its format, its words, and the format the
 * kernel is asked for (a PNG is the SVG picture rasterized in the page). */
export const DOWNLOADS = [
  { format: "csv", label: "CSV", hint: "this chart's data, every row", ask: "csv" },
  { format: "svg", label: "SVG", hint: "the plot's picture", ask: "svg" },
  { format: "png", label: "PNG", hint: "the plot's picture, as an image", ask: "svg" },
];

/** How many times its size the PNG is drawn (crisp on a high-density screen). */
export const PNG_SCALE = 2;

/** The `download` control's value asking the kernel for `format` ("csv", "svg" or "png") of
 * the chart titled `chart` ("" for the one shared chart); `id` tells its answer apart. */
export function downloadRequest(id, chart, format) {
  const entry = DOWNLOADS.find((d) => d.format === format);
  if (!entry) throw new Error(`no download format ${format}`);
  return { id, chart, format: entry.ask };
}

/** The bytes of a widget message's buffer (a DataView, an ArrayBuffer or a typed array). */
export function bufferBytes(buffer) {
  if (buffer instanceof ArrayBuffer) return new Uint8Array(buffer);
  if (ArrayBuffer.isView(buffer)) {
    return new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength);
  }
  return null;
}

/** The kernel's answer to a download in a custom message (`content`, `buffers`):
 * `{id, name, mime, error, bytes}` (`bytes` a Uint8Array, null with an error), or null when
 * the message is no download's answer. */
export function readDownload(content, buffers) {
  if (!content || typeof content !== "object" || !("jhw_download" in content)) return null;
  const bytes = buffers && buffers.length ? bufferBytes(buffers[0]) : null;
  let error = typeof content.error === "string" ? content.error : "";
  if (!error && bytes === null) error = "the kernel sent no file";
  return {
    id: content.jhw_download,
    name: String(content.name || "download"),
    mime: String(content.mime || "application/octet-stream"),
    error,
    bytes: error ? null : bytes,
  };
}

/** The PNG's file name: the SVG's, with its extension changed. */
export function pngName(name) {
  return `${name.replace(/\.svg$/i, "")}.png`;
}

/** The size in pixels an SVG document's root element gives (`width`, `height`, else its
 * `viewBox`), or null when it gives none. */
export function svgSize(text) {
  const root = /<svg\b[^>]*>/i.exec(text);
  if (!root) return null;
  const attr = (name) => {
    const m = new RegExp(`\\s${name}\\s*=\\s*"([^"]*)"`, "i").exec(root[0]);
    return m ? m[1] : null;
  };
  let width = parseFloat(attr("width"));
  let height = parseFloat(attr("height"));
  if (!(width > 0 && height > 0)) {
    const box = (attr("viewBox") || "").trim().split(/[\s,]+/).map(Number);
    [width, height] = box.length === 4 ? [box[2], box[3]] : [NaN, NaN];
  }
  return width > 0 && height > 0 ? { width, height } : null;
}

/** A fresh request id: random, so that the views of one plot (which all receive every answer)
 * each keep only their own. */
export function requestId() {
  return Math.floor(Math.random() * 2 ** 31);
}
