// Each chart's download menu (placed by chart_log.js): the chart's data as CSV, the plot's
// picture as SVG or PNG, saved by the page from what the kernel sends (never fetched: the
// page works offline and a file may hold rows no server keeps).
//
// A click sends a `download` control (js/panel/kernel.js: a message, so that it is served while a
// cell runs, like every control); the kernel answers with a custom message carrying the file
// as a binary buffer (jaxhist_widget/ui/plot/_download.py), which becomes a Blob saved through
// an <a download>. The PNG is the SVG drawn on a canvas that is never shown.

import { element } from "../base/dom.js";
import {
  DOWNLOADS,
  PNG_SCALE,
  downloadRequest,
  pngName,
  readDownload,
  requestId,
  svgSize,
} from "../base/download.js";
import { sendControl } from "../panel/kernel.js";

/** Save `blob` as a file named `name`, in the page (an object URL, freed once saved). */
function saveBlob(blob, name) {
  const url = URL.createObjectURL(blob);
  const link = element("a");
  link.href = url;
  link.download = name;
  link.hidden = true;
  document.body.append(link);
  link.click();
  link.remove();
  // The download has its bytes once the click is handled; later, not at once, for slow pages.
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

/** The SVG document `text` as a PNG Blob, `scale` times its size, drawn in the page. */
async function pngOf(text, scale = PNG_SCALE) {
  const size = svgSize(text);
  if (!size) throw new Error("the picture has no size");
  const url = URL.createObjectURL(new Blob([text], { type: "image/svg+xml" }));
  try {
    const image = new Image();
    await new Promise((resolve, reject) => {
      image.onload = resolve;
      image.onerror = () => reject(new Error("the picture could not be drawn"));
      image.src = url;
    });
    const canvas = document.createElement("canvas");
    canvas.width = Math.round(size.width * scale);
    canvas.height = Math.round(size.height * scale);
    const context = canvas.getContext("2d");
    context.scale(scale, scale);
    context.drawImage(image, 0, 0, size.width, size.height);
    return await new Promise((resolve, reject) => {
      canvas.toBlob((b) => (b ? resolve(b) : reject(new Error("no PNG made"))), "image/png");
    });
  } finally {
    URL.revokeObjectURL(url);
  }
}

/**
 * The download menus of one view: `control(title)` makes a chart's (`title()` says the chart's
 * title when clicked), `dispose()` stops listening. Every view of a plot receives every answer:
 * each keeps those to the requests it sent.
 */
export function attachDownloads(model) {
  const pending = new Map(); // request id -> {format, note}
  const menus = new Set();
  const onMessage = (content, buffers) => {
    const got = readDownload(content, buffers);
    const asked = got && pending.get(got.id);
    if (!asked) return;
    pending.delete(got.id);
    finish(got, asked).catch((e) => say(asked.note, `download failed: ${e.message || e}`));
  };
  async function finish(got, asked) {
    if (got.error) {
      say(asked.note, got.error);
      console.warn(`jaxhist_widget: download: ${got.error}`);
      return;
    }
    if (asked.format === "png") {
      const text = new TextDecoder().decode(got.bytes);
      saveBlob(await pngOf(text), pngName(got.name));
    } else {
      saveBlob(new Blob([got.bytes], { type: got.mime }), got.name);
    }
    say(asked.note, "");
  }
  function say(note, text) {
    note.textContent = text;
    note.hidden = !text;
  }
  function close(menu) {
    menu.list.hidden = true;
    menu.button.setAttribute("aria-expanded", "false");
  }
  // A click anywhere else closes an open menu.
  const onDocument = (event) => {
    for (const menu of menus) {
      if (!menu.root.isConnected) menus.delete(menu); // its chart's tools were replaced
      else if (!menu.root.contains(event.target)) close(menu);
    }
  };
  document.addEventListener("pointerdown", onDocument, true);
  model.on("msg:custom", onMessage);

  function control(title) {
    const root = element("div", "jhw-download");
    const button = element("button", "jhw-download-button", "↓");
    button.type = "button";
    button.title = "Download: this chart's data (CSV), the plot's picture (SVG, PNG)";
    button.setAttribute("aria-label", "download");
    button.setAttribute("aria-haspopup", "menu");
    button.setAttribute("aria-expanded", "false");
    const list = element("div", "jhw-download-menu");
    list.setAttribute("role", "menu");
    list.hidden = true;
    const note = element("div", "jhw-download-note");
    note.setAttribute("role", "status");
    note.hidden = true;
    const menu = { root, button, list };
    for (const entry of DOWNLOADS) {
      const item = element("button", "jhw-download-item");
      item.type = "button";
      item.dataset.format = entry.format;
      item.setAttribute("role", "menuitem");
      item.append(element("b", "", entry.label), element("span", "", entry.hint));
      item.addEventListener("click", () => {
        close(menu);
        const id = requestId();
        pending.set(id, { format: entry.format, note });
        say(note, "preparing…");
        sendControl(model, "download", downloadRequest(id, title(), entry.format));
      });
      list.append(item);
    }
    button.addEventListener("click", () => {
      const open = list.hidden;
      list.hidden = !open;
      button.setAttribute("aria-expanded", String(open));
    });
    root.addEventListener("keydown", (event) => {
      if (event.key === "Escape") close(menu);
    });
    root.append(button, list, note);
    menus.add(menu);
    return root;
  }
  return {
    control,
    dispose() {
      model.off("msg:custom", onMessage);
      document.removeEventListener("pointerdown", onDocument, true);
      menus.clear();
      pending.clear();
    },
  };
}
