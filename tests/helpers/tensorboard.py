"""Reading TensorBoard event files back with TensorBoard's own readers, and serving them.

Everything is read the way TensorBoard reads it: run names from its event multiplexer (what its
run selector lists), events from its event accumulator (CRCs checked by its record reader).
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import numpy as np

#: Keep every event (TensorBoard samples down to a reservoir by default).
EVERYTHING = {"scalars": 0, "histograms": 0, "tensors": 0, "compressedHistograms": 0}


def run_names(logdir: Path) -> dict[str, dict]:
    """TensorBoard's runs under ``logdir`` (as its run selector names them) and their tags."""
    from tensorboard.backend.event_processing.plugin_event_multiplexer import EventMultiplexer

    mux = EventMultiplexer(size_guidance=EVERYTHING).AddRunsFromDirectory(str(logdir))
    mux.Reload()
    return {name.replace(os.sep, "/"): tags for name, tags in mux.Runs().items()}


@dataclasses.dataclass
class Events:
    """One run directory's events: scalars per tag (steps, float32 values, wall times),
    histograms per tag (steps, HistogramValue), texts (step, text), in file order."""

    scalars: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]
    histograms: dict[str, tuple[np.ndarray, list]]
    texts: list[tuple[int, str]]


def read_events(run_dir: Path) -> Events:
    """Every event of one run directory, through TensorBoard's `EventAccumulator`."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    from tensorboard.util import tensor_util

    acc = EventAccumulator(str(run_dir), size_guidance=EVERYTHING).Reload()
    tags = acc.Tags()
    scalars = {}
    for tag in tags["scalars"]:
        events = acc.Scalars(tag)
        scalars[tag] = (
            np.array([e.step for e in events], np.int64),
            np.array([e.value for e in events], np.float32),  # a float32 widened: exact
            np.array([e.wall_time for e in events]),
        )
    histograms = {}
    for tag in tags["histograms"]:
        events = acc.Histograms(tag)
        histograms[tag] = (np.array([e.step for e in events]), [e.histogram_value for e in events])
    texts = []
    for tag in tags["tensors"]:
        for e in acc.Tensors(tag):
            texts.append((e.step, tensor_util.make_ndarray(e.tensor_proto).item().decode()))
    return Events(scalars, histograms, texts)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def tensorboard_server(logdir: Path, timeout: float = 90.0) -> Iterator[str]:
    """``tensorboard --logdir LOGDIR`` on a free localhost port: yields its URL."""
    port = free_port()
    log = open(Path(logdir).parent / f"tensorboard-{port}.log", "w")  # noqa: SIM115
    proc = subprocess.Popen(
        [
            *(sys.executable, "-m", "tensorboard.main", "--logdir", str(logdir)),
            *("--host", "127.0.0.1", "--port", str(port), "--reload_interval", "1"),
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + timeout
        while True:
            try:
                with urllib.request.urlopen(f"{url}/data/runs", timeout=5):
                    break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    log.flush()
                    raise RuntimeError(
                        "tensorboard did not start:\n" + Path(log.name).read_text()[-3000:]
                    ) from None
                time.sleep(0.3)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()
