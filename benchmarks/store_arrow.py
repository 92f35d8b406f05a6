"""The Arrow IPC side of ``benchmarks/store.py``: a sink writing one IPC stream file per run,
and a reader that counts the rows a (possibly torn) stream file holds. Needs pyarrow, which is
not a dependency of the package: without it `pa` is None and the benchmark skips Arrow.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

import jaxhist_widget as jhw

try:  # optional, for the comparison only
    import pyarrow as pa
except ImportError:  # pragma: no cover - depends on the environment
    pa = None

__all__ = ["ArrowIPC", "pa", "read_arrow"]


class ArrowIPC(jhw.Sink):
    """One Arrow IPC stream file per run in ``folder``; a record batch per chunk, flushed."""

    rows_can_wait = True

    def __init__(self, folder: Path) -> None:
        super().__init__()
        self.folder = folder
        self._open: dict[int, tuple] = {}

    def on_start(self, run):
        fields = [pa.field("lane", pa.int32()), pa.field("step", pa.int64())]
        layout = run.layout
        for name, shape, dtype in zip(layout.names, layout.shapes, layout.dtypes, strict=True):
            if shape == () and dtype in ("float32", "int32", "bool"):
                fields.append(pa.field(name, pa.from_numpy_dtype(np.dtype(dtype))))
            else:  # vectors (and types Arrow lacks) as each row's bytes
                size = int(np.prod(shape)) * np.dtype(dtype).itemsize
                fields.append(pa.field(name, pa.binary(size)))
        schema = pa.schema(fields)
        sink = pa.OSFile(str(self.folder / f"run-{os.getpid()}-{run.id}.arrows"), "wb")
        self._open[run.id] = (sink, pa.ipc.new_stream(sink, schema), schema, [])

    def on_rows(self, run, lanes):
        sink, writer, schema, written = self._open[run.id]
        written += [0] * (len(run.counts) - len(written))
        for lane in lanes:
            leaves = run.rows_since(lane, written[lane])
            n = len(leaves[0])
            if not n:
                continue
            cols = [pa.array(np.full(n, lane, np.int32)), pa.array(np.arange(n) + written[lane])]
            for i, leaf in enumerate(leaves):
                typ = schema.field(2 + i).type
                if pa.types.is_fixed_size_binary(typ):
                    data = pa.py_buffer(np.ascontiguousarray(leaf).tobytes())
                    cols.append(pa.FixedSizeBinaryArray.from_buffers(typ, n, [None, data]))
                else:
                    cols.append(pa.array(leaf))
            writer.write_batch(pa.RecordBatch.from_arrays(cols, schema=schema))
            written[lane] += n
        sink.flush()

    def on_end(self, run):
        sink, writer, _, _ = self._open.pop(run.id)
        writer.close()
        sink.close()


def read_arrow(folder: Path) -> int:
    """Rows readable from every stream file in ``folder`` (a torn last batch is dropped)."""
    rows = 0
    for path in folder.glob("*.arrows"):
        try:
            with pa.ipc.open_stream(pa.memory_map(str(path))) as reader:
                while True:
                    try:
                        rows += reader.read_next_batch().num_rows
                    except StopIteration:
                        break
        except (pa.ArrowInvalid, OSError):
            pass  # torn mid-batch: the batches before it were counted
    return rows
