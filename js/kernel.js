// The panel's link to its kernel: the controls that write the model (Stop as an interrupt or a
// message, Clear, log y, keep runs) and the watch that notices a dead or restarted kernel.

import { isRunning, kernelLostLabel } from "./format.js";

function kernelOf(model) {
  const manager = model.widget_manager;
  return manager && manager.kernel ? manager.kernel : null;
}

/** "interrupt" only where the kernel connection can be asked for one; else "message". */
export function stopMode(model) {
  const k = kernelOf(model);
  const canInterrupt = k !== null && typeof k.interrupt === "function";
  return model.get("stop_mode") === "interrupt" && canInterrupt ? "interrupt" : "message";
}

/** Adds one to the counter trait `name` (a counter, so every click is a change). */
function bump(model, name) {
  model.set(name, (model.get(name) || 0) + 1);
  model.save_changes();
}

/** Connects the controls of `ui` to the model. `view` is the view's own state; `refresh`
 * redraws at once. Returns a function that disconnects them. */
export function wireControls(ui, model, view, refresh) {
  const onStop = () => {
    if (view.kernelLost || !isRunning(model.get("status"))) return;
    // Stays set (the button disabled, "stopping…") until that run ended, so a second click
    // cannot turn into a second interrupt (which the kernel would take as "I insist": a
    // KeyboardInterrupt).
    view.stoppingRun = model.get("run_number");
    if (stopMode(model) === "interrupt") {
      // The cell holds the kernel: a widget message would wait until it ends. The interrupt
      // (SIGINT, like ■) reaches the running loop at its next chunk.
      Promise.resolve()
        .then(() => kernelOf(model).interrupt())
        .catch((e) => {
          console.warn("jaxhist_widget: kernel interrupt failed, sending a stop message", e);
          bump(model, "stop_clicks");
        });
    } else {
      bump(model, "stop_clicks");
    }
    refresh();
  };
  const onClear = () => bump(model, "clear_clicks");
  const onLogY = () => {
    model.set("log_y", ui.logY.checked);
    model.save_changes();
  };
  const onKeep = () => {
    model.set("keep_runs", ui.keep.checked);
    model.save_changes();
  };
  const listeners = [
    [ui.stop, "click", onStop],
    [ui.clear, "click", onClear],
    [ui.logY, "change", onLogY],
    [ui.keep, "change", onKeep],
  ];
  for (const [node, type, fn] of listeners) node.addEventListener(type, fn);
  return () => {
    for (const [node, type, fn] of listeners) node.removeEventListener(type, fn);
  };
}

/** Calls `onLost(label)` when the model's kernel dies or restarts (see `kernelLostLabel`).
 * A dead or restarted kernel takes the model's comm with it and sends nothing more, so
 * without this the panel would say "running" with Stop enabled forever. (The model's
 * comm_live flag is not exposed by anywidget's model proxy, and its change event does not
 * say which way it changed.) Returns a function that stops watching. */
export function watchKernel(model, onLost) {
  const kernel = kernelOf(model);
  const signal = kernel && kernel.statusChanged;
  if (!signal || typeof signal.connect !== "function") return () => {};
  const onStatus = (_sender, kernelStatus) => {
    const lost = kernelLostLabel(kernelStatus);
    if (lost) onLost(lost);
  };
  signal.connect(onStatus);
  onStatus(null, kernel.status);
  return () => {
    if (typeof signal.disconnect === "function") signal.disconnect(onStatus);
  };
}
