"""One run's TensorBoard event files: their directory, the tags its rows become, appending rows.

Host runtime, numpy only. A run becomes a directory under the log directory, named after the run
(``adam``; ``adam (2)`` when that name is taken; ``run 1``, ``run 2``, ... for a run without a
name; a name longer than a file name may be, 255 bytes, cut to fit with a digest of the whole
after ``~``, the whole name in its text summary; a name of ``/``-separated parts whose whole
path would pass the OS's limit on a path, 4096 bytes on Linux, keeps as many leading parts
as fit and its other parts joined into one cut to fit), holding one event file; under vmap, one
directory per lane (``adam/lane 3``), which TensorBoard's run selector lists as ``adam/lane 3``.
A row is one event at its step (row 0, the initial carry, is step 0). What a leaf becomes
(`TagPlan`):

- a scalar leaf: a scalar tag named after it (``loss``, ``params.w``);
- an array leaf of up to `MAX_COMPONENT_TAGS` components: a scalar tag per component
  (``x[0]``, ``x[1]``; ``w[0,1]`` for a matrix), as `StoredRun.to_pandas` names its columns;
- a larger leaf: a histogram of its finite components at each step, under its name;
- a step counter (a leaf that counts the steps, see `Layout.step_counters`) is left out: the
  step axis shows it; a leaf of no components too.

Scalars are ``simple_value`` floats, the 32-bit form every TensorBoard reader takes (its data
server drops 64-bit scalar tensors): float32 values are written bit for bit, NaN and infinities
included; float64 values and integers beyond 2**24 are rounded to the nearest float32 (a
float64 beyond float32's range becomes an infinity); bool is 0.0 or 1.0.

The run's name and status are a text summary (tag `TEXT_TAG`) at step 0 when its file is made
and at its last step when it ends. Each lane's file is appended to with one ``write`` per batch
of rows, and straight to the file (no buffer), so whatever was written survives a killed process;
a write that fails is cut back off the file and tried again with the next batch.
"""

from __future__ import annotations

import datetime
import errno
import hashlib
import itertools
import os
import socket
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from ..._wire import Layout
from ..runtime import Run
from ._tfevents import RowEncoder, header_event, record, records, text_event

__all__ = ["MAX_COMPONENT_TAGS", "TEXT_TAG", "RunFiles", "TagPlan"]

#: A leaf of at most this many components becomes one scalar tag per component; a larger one
#: becomes a histogram. The same cut as a `LivePlot`'s ``vectors="auto"`` (lines up to 10).
MAX_COMPONENT_TAGS = 10

#: The tag of the text summary that names the run and says its status.
TEXT_TAG = "jaxhist/run"

#: A run directory's name takes at most this many bytes: file systems allow 255, and a name
#: that is taken gets `` (2)`` ... `` (999999)`` after it. A longer run name is cut (`_fit`);
#: its text summary keeps the whole name.
NAME_BYTES = 255 - len(" (999999)")

#: The most bytes a path may take, its closing NUL included, where the OS cannot be asked (Linux's
#: PATH_MAX). Past it every call on the path fails (Errno 36), however short each part.
PATH_BYTES = 4096

#: What a run's directory holds below it, at most: a lane's directory (``/lane 4294967295``)
#: and an event file's name (``/`` and 255 bytes, the file system's limit on a name).
BELOW_RUN_BYTES = len("/lane 4294967295") + 1 + 255

#: The ``~`` and digest that end a name cut to fit (`_fit`).
_DIGEST_BYTES = 11

#: A run's last directory keeps at least this many bytes of its name besides its digest; a log
#: directory too deep for that is refused, naming the fix.
FEWEST_NAME_BYTES = 16

#: Wall time of each row written, in seconds since the epoch, from the lanes written, each
#: one's rows (from ``start`` to ``stop``), and the steps of all those rows, lane after lane.
WallClock = Callable[..., np.ndarray]


class TagPlan:
    """The tags a layout's rows become (see the module docstring).

    Examples
    --------
    >>> import jax, numpy as np
    >>> from jaxhist_widget._wire import Layout
    >>> tree = jax.tree_util.tree_structure({"i": 0, "loss": 0, "x": 0, "w": 0})
    >>> layout = Layout(("i", "loss", "x", "w"), ((), (), (2,), (50,)),
    ...                 ("int32", "float32", "float32", "float64"), tree, 9, 10, None, (0,))
    >>> plan = TagPlan(layout)
    >>> plan.scalar_tags, plan.histogram_tags
    (['loss', 'x[0]', 'x[1]'], ['w'])
    """

    def __init__(self, layout: Layout) -> None:
        self.scalar_tags: list[str] = []
        self.histogram_tags: list[str] = []
        self._scalars: list[tuple[int, int]] = []  # (leaf, components) of scalar leaves
        self._histograms: list[tuple[int, int]] = []
        #: One line per leaf: what it became.
        self.described: list[str] = []
        counters = set(layout.step_counters)
        for i, (name, shape, dtype) in enumerate(
            zip(layout.names, layout.shapes, layout.dtypes, strict=True)
        ):
            size = int(np.prod(shape, dtype=np.int64))
            kind = f"{dtype}[{','.join(map(str, shape))}]" if shape else dtype
            if i in counters or size == 0:
                why = "the step" if i in counters else "no components"
                self.described.append(f"`{name}` ({kind}): left out ({why})")
            elif shape == ():
                self._scalars.append((i, 1))
                self.scalar_tags.append(name)
                self.described.append(f"`{name}` ({kind}): scalar")
            elif size <= MAX_COMPONENT_TAGS:
                self._scalars.append((i, size))
                self.scalar_tags += [
                    f"{name}[{','.join(map(str, np.unravel_index(k, shape)))}]" for k in range(size)
                ]
                self.described.append(f"`{name}` ({kind}): a scalar per component")
            else:
                self._histograms.append((i, size))
                self.histogram_tags.append(name)
                self.described.append(f"`{name}` ({kind}): histogram")

    def values(self, leaves: list[np.ndarray]) -> tuple[np.ndarray, list[np.ndarray]]:
        """Rows of ``leaves`` as (rows, scalar tags) float32 and (rows, n) histogram inputs."""
        rows = len(leaves[0]) if leaves else 0
        columns = [_float32(leaves[i]).reshape(rows, n) for i, n in self._scalars]
        if len(columns) == 1:
            scalars = columns[0]
        elif columns:
            scalars = np.concatenate(columns, axis=1)
        else:
            scalars = np.zeros((rows, 0), np.float32)
        hists = [np.asarray(leaves[i]).reshape(rows, n) for i, n in self._histograms]
        return scalars, hists


def _float32(leaf: np.ndarray) -> np.ndarray:
    """A leaf's rows as float32: float32 as is (bits kept), others rounded (see the module
    docstring). Narrow floats (bfloat16, float8) and ints up to 24 bits convert exactly."""
    if leaf.dtype == np.float32:
        return leaf
    with np.errstate(over="ignore", invalid="ignore"):  # float64 beyond float32: inf
        return leaf.astype(np.float32)


class RunFiles:
    """The event files of one run under ``logdir``: made (its directory claimed) when created,
    appended to by `write`, closed with a status text by `end`.

    Not thread-safe: one writer at a time (a sink's worker task, or an export).
    """

    def __init__(self, logdir: Path, name: str | None, run: Run) -> None:
        self.name = name
        self.dir = claim(logdir, name)
        self._plan = TagPlan(run.layout)
        self._encoder = RowEncoder(self._plan.scalar_tags, self._plan.histogram_tags)
        self._layout = run.layout
        self._written = np.zeros(0, np.int64)  # rows per lane in the files
        # Bytes in each lane's file (0: not made yet): a write that fails is cut back to it.
        self._sizes: list[int] = []
        self._paths: list[str] = []
        self._lanes: int | None = None
        self._host, self._pid = socket.gethostname(), os.getpid()
        self._started = time.time()

    @property
    def written(self) -> list[int]:
        """Rows written so far, per lane."""
        return self._written.tolist()

    def lane_dir(self, lane: int) -> Path:
        """The directory of ``lane``'s event file (the run's own when it is not batched)."""
        return self.dir if self._lanes is None else self.dir / f"lane {lane}"

    def write(self, run: Run, wall: WallClock, limit: int | None = None) -> int:
        """Append the rows of ``run`` not written yet (each lane's, one ``write`` a lane), or
        about ``limit`` of them (the same number from each lane); returns how many rows."""
        counts = np.asarray(run.counts, np.int64)
        self._know_lanes(run, len(counts))
        start = self._written
        lanes = np.flatnonzero(counts > start)
        if len(lanes) == 0:
            return 0
        if limit is not None:
            counts = np.minimum(counts, start + max(1, limit // len(lanes)))
        # Lanes in step (under vmap, all that run) are read together, then every row of every
        # lane is encoded at once: no Python per lane or row until each lane's file is written.
        pairs = np.stack([start[lanes], counts[lanes]], axis=1)
        spans, group_of = np.unique(pairs, axis=0, return_inverse=True)
        groups = [lanes[group_of.reshape(-1) == g] for g in range(len(spans))]
        lanes = np.concatenate(groups)
        blocks = [
            run.block(group.tolist(), int(a), int(b))
            for group, (a, b) in zip(groups, spans, strict=True)
        ]
        per_lane = counts[lanes] - start[lanes]
        leaves = [
            np.concatenate([x.reshape(-1, *x.shape[2:]) for x in leaf])
            if len(blocks) > 1
            else leaf[0].reshape(-1, *leaf[0].shape[2:])
            for leaf in zip(*blocks, strict=True)
        ]
        ends = np.cumsum(per_lane)
        steps = np.arange(int(ends[-1])) - np.repeat(ends - per_lane - start[lanes], per_lane)
        scalars, hists = self._plan.values(leaves)
        walls = wall(lanes, start[lanes], counts[lanes], steps=steps)
        buf, byte_ends = self._encoder.encode(steps, walls, scalars, hists)
        bounds = np.concatenate([[0], byte_ends[ends - 1]]).tolist()
        view = buf.data  # memoryview(buf): the array's bytes, not copied
        pieces = [view[a:b] for a, b in itertools.pairwise(bounds)]
        self._append(run, lanes.tolist(), pieces, counts[lanes].tolist())
        return int(ends[-1])

    def behind(self, run: Run) -> bool:
        """Whether ``run`` has rows not written yet."""
        counts = np.asarray(run.counts, np.int64)
        return len(counts) > len(self._written) or bool(np.any(counts > self._written))

    def end(self, run: Run, wall_time: float) -> None:
        """Append each lane's status (a run given up for dead that comes back may end again)."""
        self._know_lanes(run, len(run.counts))
        lanes = list(range(len(self._written)))
        name, texts = self.name or self.dir.name, []
        for lane in lanes:
            status = run.statuses[lane] if lane < len(run.statuses) else run.status
            steps = max(int(self._written[lane]) - 1, 0)
            text = f"**{name}**{self._lane_text(lane)}: {status} after {steps} step"
            texts.append(text_event(wall_time, steps, TEXT_TAG, text + "s" * (steps != 1)))
        self._append(run, lanes, records(texts))

    # ------------------------------------------------------------------------ helpers
    def _know_lanes(self, run: Run, lanes: int) -> None:
        """Grow the per-lane state to ``lanes`` lanes (once the run's first chunk told)."""
        grow = lanes - len(self._written)
        if grow <= 0:
            return
        self._lanes = run.lanes
        self._written = np.concatenate([self._written, np.zeros(grow, np.int64)])
        self._sizes += [0] * grow
        name = _file_name(self._started, self._host, self._pid)
        self._paths += [
            os.path.join(self.lane_dir(k), name) for k in range(len(self._paths), lanes)
        ]

    def _heads(self, run: Run, lanes: list[int]) -> list[bytes]:
        """The first records of each lane's file: the format's version, then what the run is."""
        started = datetime.datetime.fromtimestamp(self._started, datetime.UTC)
        about = [
            "",
            *(f"- {line}" for line in self._plan.described),
            f"- at most {self._layout.max_steps} steps",
            f"- written by jaxhist_widget on {self._host} (pid {self._pid}), "
            f"{started:%Y-%m-%d %H:%M:%S} UTC",
        ]
        name = self.name or self.dir.name
        texts = [
            text_event(
                self._started,
                0,
                TEXT_TAG,
                "\n".join([f"**{name}**{self._lane_text(lane)}: started", *about]),
            )
            for lane in lanes
        ]
        version = record(header_event(self._started))
        return [version + text for text in records(texts)]

    def _lane_text(self, lane: int) -> str:
        return "" if self._lanes is None else f", lane {lane} of {self._lanes}"

    def _append(
        self,
        run: Run,
        lanes: list[int],
        data: Sequence[bytes | memoryview],
        rows: list[int] | None = None,
    ) -> None:
        """Append ``data[j]`` to the file of ``lanes[j]`` in one ``write`` each (a new file
        gets its head first), each lane then holding ``rows[j]`` rows; a lane whose write
        fails is left as it was (and the lanes after it are not written)."""
        new = [lane for lane in lanes if self._sizes[lane] == 0]
        heads = dict(zip(new, self._heads(run, new), strict=True)) if new else {}
        for j, (lane, chunk) in enumerate(zip(lanes, data, strict=True)):
            if lane in heads:
                os.makedirs(self.lane_dir(lane), exist_ok=True)
                chunk = heads[lane] + bytes(chunk)
            fd = os.open(self._paths[lane], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                view, done = memoryview(chunk), 0
                try:
                    while done < len(view):
                        done += os.write(fd, view[done:])
                except BaseException:
                    os.ftruncate(fd, self._sizes[lane])  # no half record left for a reader
                    raise
                self._sizes[lane] += done
            finally:
                os.close(fd)
            if rows is not None:
                self._written[lane] = rows[j]


def _file_name(started: float, host: str, pid: int) -> str:
    # TensorBoard reads files whose name holds "tfevents", in name order.
    return f"events.out.tfevents.{int(started)}.{host}.{pid}.jaxhist"


def claim(logdir: Path, name: str | None) -> Path:
    """A new directory under ``logdir`` for a run named ``name``: its name as a relative path
    (``/`` nests, as TensorBoard groups runs), else the first free of ``name (2)``, ``name
    (3)``, ...; ``run 1``, ``run 2``, ... for no name. Made here, so two writers (threads or
    processes) never share one."""
    parts = [_safe(p) for p in (name or "").split("/")]
    parts = _within_path_limit(logdir, [p for p in parts if p])
    parent = logdir.joinpath(*parts[:-1])
    parent.mkdir(parents=True, exist_ok=True)
    last = parts[-1] if parts else None
    for k in range(1, 1_000_000):
        numbered = f"run {k}" if last is None else f"{last} ({k})"
        candidate = last if last is not None and k == 1 else numbered
        try:
            (parent / candidate).mkdir()
        except FileExistsError:
            continue
        return parent / candidate
    raise FileExistsError(f"no free directory for run {name!r} under {str(parent)!r}")


def _within_path_limit(logdir: Path, parts: list[str]) -> list[str]:
    """``parts`` (each cut to fit a name) as directories under ``logdir`` whose files' paths
    stay within the OS's limit: as they are if they fit, else the leading parts that leave room
    for a last one, then the others joined by ``_`` and cut to fit (`_fit`, its digest keeping
    two names that differ late apart). TensorBoard then still groups the runs by those leading
    parts; the run's text summary has its whole name."""
    if not parts:
        return parts
    room = _path_limit(logdir) - 1 - BELOW_RUN_BYTES - len(os.fsencode(os.path.abspath(logdir)))
    sizes = [1 + len(os.fsencode(p)) for p in parts]
    number = len(" (999999)")  # the number a taken name gets after it
    if sum(sizes) + number <= room:
        return parts
    kept, used = 0, 0
    while kept < len(parts) - 1 and used + sizes[kept] + 1 + NAME_BYTES + number <= room:
        used += sizes[kept]
        kept += 1
    last_bytes = min(NAME_BYTES, room - used - 1 - number)
    if last_bytes < FEWEST_NAME_BYTES + _DIGEST_BYTES:
        raise OSError(
            errno.ENAMETOOLONG,
            f"TensorBoard: the log directory {str(logdir)!r} leaves no room under the OS's "
            f"limit of {_path_limit(logdir)} bytes on a path for a run's directory and event "
            "file; give TensorBoard a log directory with a shorter path.",
        )
    return [*parts[:kept], _fit("_".join(parts[kept:]), last_bytes)]


def _path_limit(logdir: Path) -> int:
    """The OS's limit on a path's bytes (its NUL included) on ``logdir``'s file system."""
    for folder in (logdir, *logdir.absolute().parents):
        try:
            return os.pathconf(folder, "PC_PATH_MAX")
        except FileNotFoundError:
            continue  # not made yet: its nearest folder that is
        except (AttributeError, OSError, ValueError):  # no pathconf (Windows), or no answer
            break
    return PATH_BYTES


def _safe(part: str) -> str:
    """One path component of a run's name: no separator, no NUL, never ``.`` or ``..``, and
    short enough for a file name with a number after it (`_fit`)."""
    part = part.replace("\\", "_").replace("\0", "_").strip()
    return "_" if part in (".", "..") else _fit(part)


def _fit(part: str, limit: int = NAME_BYTES) -> str:
    """``part`` if it fits ``limit`` bytes (encoded as the file system encodes names), else
    its beginning cut at a character, ``~`` and a digest of the whole: two long names that
    begin alike still get directories of their own, and the same name gets the same one (then
    numbered, as any name)."""
    encoded = os.fsencode(part)
    if len(encoded) <= limit:
        return part
    tail = "~" + hashlib.sha256(encoded).hexdigest()[: _DIGEST_BYTES - 1]  # ASCII
    cut = encoded[: limit - len(tail)]
    return cut.decode(sys.getfilesystemencoding(), "ignore").rstrip() + tail
