"""The on-disk format of a `Store`: one SQLite file, readable without this package.

Host runtime, stdlib and numpy only. Format version 4 (``PRAGMA user_version``)::

    runs(id, name, started, ended, elapsed, status, statuses, steps, rows, lanes, max_steps,
         fields, columns, dtypes, shapes, kinds, tree, host, pid, writer, heartbeat,
         step_counters, name_json, incomplete, byteorder)
    fields(run, leaf, name, dtype, shape, codec, itemsize, rowbytes, bits, nexp, nmant, bias,
           special)                                     -- one line per leaf of each run
    blocks(run, leaf, first, nrows, lane0, nlanes, lanes, data)    -- rowid: the order filed
    _seq(i, pow2)                                       -- 0..4095, 2**(i-2048): for the view
    history                                             -- one line per (run, lane, step, leaf)

``runs`` holds one line per run: ``fields`` (the leaf names, exact), ``dtypes``, ``shapes``,
``statuses``, ``rows`` (rows per lane: at each commit for up to 64 lanes, else each second and at
the end), ``step_counters`` (the leaves that count the steps, which
a plot leaves out by default) are JSON lists, ``tree`` the record's structure (JSON, to rebuild
rows in the form of ``History.to_numpy()``), ``lanes`` is NULL for a run without vmap (its rows
have lane 0), ``steps`` the most steps any lane took. ``name`` is the run's name as UTF-8 text
(a lone surrogate shown as ``\\udcXX``), ``name_json`` the exact name. ``incomplete`` says why
the file lacks rows of the run when its writer gave up on it (the disk filled); NULL otherwise.

The rows are in ``blocks``: each line holds one leaf's rows ``first .. first + nrows`` of
``nlanes`` lanes (``lane0 ..`` when ``lanes`` is NULL, else the int32 lane indices in
``lanes``), as raw element bytes in the machine's byte order (``runs.byteorder``), C order with
shape ``(nlanes, nrows, *shape)``. Raw bytes keep every value exact (NaN payloads, -0.0, every
dtype down to int2 and float4) and cost a copy to write and read, whatever the number of leaves
or lanes. A leaf's blocks, in the order filed (``rowid``), hold each lane's rows in order.

``history`` shows every value as SQL: one line per run, lane, step and leaf (``run_name``,
``run_status``, ``run``, ``lane``, ``step``, ``field``, ``value``), decoding the bytes in plain
SQL (``fields`` says how: `codec`): ``value`` is an INTEGER for bool and integer leaves, a REAL
for floating ones (NULL for a NaN, which SQL lacks), and the row's bytes for vector leaves.
A view of one line per leaf has no limit on the number of leaves (SQLite allows 2,000
columns); pivot it for a column per leaf, e.g.
``df.pivot(index=["run", "lane", "step"], columns="field", values="value")``.

A run's ``status`` is ``running`` until its writer ends it; see `_liveness` for how a
reader tells a run whose writer died. Files of versions 0 to 3 (a ``rows`` table with a column
per leaf, ``nan_bits``) are read as they are (`_legacy`) and upgraded by the first writer
(`_migrate`).
"""

from __future__ import annotations

import json
from typing import Any

import ml_dtypes
import numpy as np

from .._floats import ieee

__all__ = [
    "BLOCK_BYTES",
    "BLOCK_PAIRS",
    "LEGACY",
    "VERSION",
    "codec",
    "create",
    "display",
    "dumps",
    "exact",
    "from_exact",
]

#: The format's version (``PRAGMA user_version``): 0 (the first) had no ``writer`` /
#: ``heartbeat``, 2 no ``step_counters``, 3 a ``rows`` table with a column per leaf; 4 blocks.
VERSION = 4
#: The versions with a ``rows`` table of a column per leaf.
LEGACY = (0, 1, 2, 3)
#: (lane, row) pairs in one block at most: the ``history`` view numbers them with ``_seq``.
BLOCK_PAIRS = 4096
#: Bytes of one block line at most (beyond one row of the widest leaf): a block is read and
#: written whole.
BLOCK_BYTES = 8 << 20

_RUNS = """
CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    name TEXT,
    started TEXT,
    ended TEXT,
    elapsed REAL,
    status TEXT NOT NULL,
    statuses TEXT,
    steps INTEGER NOT NULL DEFAULT 0,
    rows TEXT,
    lanes INTEGER,
    max_steps INTEGER,
    fields TEXT NOT NULL,
    columns TEXT NOT NULL,
    dtypes TEXT NOT NULL,
    shapes TEXT NOT NULL,
    kinds TEXT NOT NULL,
    tree TEXT,
    host TEXT,
    pid INTEGER,
    writer TEXT,
    heartbeat TEXT,
    step_counters TEXT,
    name_json TEXT,
    incomplete TEXT,
    byteorder TEXT
)"""
#: Columns of ``runs`` added after the first version (an older file gets them on upgrade).
ADDED = ("writer", "heartbeat", "step_counters", "name_json", "incomplete", "byteorder")

_TABLES = [
    """
CREATE TABLE IF NOT EXISTS fields (
    run INTEGER NOT NULL,
    leaf INTEGER NOT NULL,
    name TEXT NOT NULL,
    dtype TEXT NOT NULL,
    shape TEXT NOT NULL,
    codec TEXT NOT NULL,
    itemsize INTEGER NOT NULL,
    rowbytes INTEGER NOT NULL,
    bits INTEGER,
    nexp INTEGER,
    nmant INTEGER,
    bias INTEGER,
    special INTEGER,
    PRIMARY KEY (run, leaf)
) WITHOUT ROWID""",
    """
CREATE TABLE IF NOT EXISTS blocks (
    run INTEGER NOT NULL,
    leaf INTEGER NOT NULL,
    first INTEGER NOT NULL,
    nrows INTEGER NOT NULL,
    lane0 INTEGER NOT NULL,
    nlanes INTEGER NOT NULL,
    lanes BLOB,
    data BLOB NOT NULL
)""",
    "CREATE INDEX IF NOT EXISTS blocks_of_run ON blocks (run, leaf)",
    "CREATE TABLE IF NOT EXISTS _seq (i INTEGER PRIMARY KEY, pow2 REAL NOT NULL)",
]


def create(conn: Any) -> None:
    """Create the version-4 tables and view where missing (caller holds a write transaction;
    an older file's ``runs`` is upgraded by `_migrate` first)."""
    conn.execute(_RUNS)
    for statement in _TABLES:
        conn.execute(statement)
    if conn.execute("SELECT count(*) FROM _seq").fetchone()[0] != BLOCK_PAIRS:
        conn.execute("DELETE FROM _seq")
        # In IEEE arithmetic: in a thread XLA started, 2**-1074 is computed as 0, and SQLite
        # files a REAL that equals a whole number as that integer (see _host/_floats.py).
        with ieee():
            conn.executemany(
                "INSERT INTO _seq VALUES (?, ?)",
                ((i, _pow2(i - 2048)) for i in range(BLOCK_PAIRS)),
            )
    conn.execute(VIEW)


def _pow2(k: int) -> float:
    # 2**k exactly where a double has it (subnormals included), else 0 or inf: only exponents
    # of real values (-1074 .. 1023) are ever looked up.
    if k < -1074:
        return 0.0
    if k > 1023:
        return float("inf")
    return float(np.ldexp(1.0, k))


# ------------------------------------------------------------------------------ codecs
def codec(dtype: str, shape: tuple[int, ...]) -> dict[str, Any]:
    """How the ``history`` view decodes a leaf's row bytes (a ``fields`` line, less its run,
    leaf, name): ``codec`` one of ``bool``, ``int``, ``uint``, ``float``, ``float64`` (numbers)
    or ``bytes`` (vectors, complex, 64-bit unsigned: the row's bytes); for floats the format's
    exponent and mantissa bits, bias and which patterns are special (``special``: 0 none, 1 IEEE
    infinities and NaNs, 2 only all-ones is NaN, 3 only the sign bit is NaN)."""
    dt = np.dtype(dtype)
    size = int(np.prod(shape, dtype=np.int64))
    out: dict[str, Any] = {
        "dtype": dtype,
        "shape": dumps(list(shape)),
        "codec": "bytes",
        "itemsize": dt.itemsize,
        "rowbytes": dt.itemsize * size,
        "bits": None,
        "nexp": None,
        "nmant": None,
        "bias": None,
        "special": None,
    }
    name = dt.name
    if shape != ():
        return out
    if name == "bool":
        out.update(codec="bool", bits=8)
    elif name.startswith(("int", "uint")):
        info = ml_dtypes.iinfo(dt)
        if info.min < 0 or info.bits < 64:  # uint64 does not fit SQLite's int64: bytes
            out.update(codec="int" if info.min < 0 else "uint", bits=int(info.bits))
    elif name == "float64":
        out.update(codec="float64", bits=64, nexp=11, nmant=52, bias=1023, special=1)
    elif name.startswith(("float", "bfloat")):
        finfo = ml_dtypes.finfo(dt)
        bits, nexp, nmant = int(finfo.bits), int(finfo.nexp), int(finfo.nmant)
        # With no mantissa (float8_e8m0fnu) there are no subnormals: the smallest exponent is
        # that of the pattern 0.
        bias = -int(finfo.minexp) if nmant == 0 else 1 - int(finfo.minexp)
        out.update(codec="float", bits=bits, nexp=nexp, nmant=nmant, bias=bias)
        out["special"] = _special(dt, bits, nexp, nmant)
    return out


def _special(dt: np.dtype, bits: int, nexp: int, nmant: int) -> int:
    """Which bit patterns of a float format are not numbers (see `codec`), found by asking
    numpy about the candidates, so every ml_dtypes format is told right."""
    unsigned = {1: np.uint8, 2: np.uint16, 4: np.uint32}[dt.itemsize]

    def value(pattern: int) -> float:
        with np.errstate(invalid="ignore", over="ignore"):
            return float(np.array([pattern], unsigned).view(dt)[0].astype(np.float64))

    emax, mmax = (1 << nexp) - 1, (1 << nmant) - 1
    if np.isinf(value(emax << nmant)):
        return 1
    if np.isnan(value((emax << nmant) | mmax)):
        return 2
    if bits == 1 + nexp + nmant and np.isnan(value(1 << (bits - 1))):
        return 3
    return 0


# ------------------------------------------------------------------------------- view
# The view decodes a value's bytes in plain SQL (no extension, any SQLite reader). Each byte of
# the row is looked up once, as the key of a join on _seq (b0 .. b7 below), so that the
# arithmetic after it reads columns rather than extracting the byte again each time it is used.
_ALL_BYTES = "X'" + bytes(range(256)).hex().upper() + "'"


def _byte_at(blob: str, offset: str) -> str:
    """SQL for the byte of ``blob`` at 0-based ``offset``: ``instr`` finds it in a blob of all
    256 byte values, so its position is its value."""
    return f"instr({_ALL_BYTES}, substr({blob}, 1 + {offset}, 1)) - 1"


def _byte_join(k: int) -> str:
    # A byte the row does not have (beyond its item size, or a 'bytes' leaf) joins 0.
    skip = "f.codec = 'bytes'" + (f" OR f.itemsize <= {k}" if k else "")
    expr = _byte_at("c.data", f"s.i * f.rowbytes + {k}")
    return f"CROSS JOIN _seq AS b{k} ON b{k}.i = CASE WHEN {skip} THEN 0 ELSE {expr} END"


def _u(n: int) -> str:
    """The row's first ``n`` bytes as an unsigned little-endian integer."""
    return "(" + " + ".join(f"b{k}.i * {1 << (8 * k)}" for k in range(n)) + ")"


def _view() -> str:
    u = _u(4)  # bytes past the item size are 0
    # Integers, sign-extended at their width (int4 lives in the low bits of a byte); 64-bit
    # ones with their top byte signed, so that the sum never overflows SQLite's integers.
    int64 = f"({u} + b4.i * 4294967296 + b5.i * 1099511627776 + b6.i * 281474976710656 + (b7.i - 256 * (b7.i >= 128)) * 72057594037927936)"  # noqa: E501
    integer = (
        f"CASE WHEN f.itemsize = 8 THEN {int64} "
        f"WHEN f.codec = 'int' AND {u} >= (1 << (f.bits - 1)) THEN {u} - (1 << f.bits) "
        f"ELSE {u} END"
    )
    # Floats up to 32 bits: exponent e and mantissa m from the bits; the value is
    # (m + 2**nmant) * 2**(e - bias - nmant), or m * 2**(1 - bias - nmant) below the normal range
    # (a format without mantissa bits has no subnormals); 2**k is looked up in _seq, exact.
    e = f"(({u} >> f.nmant) & ((1 << f.nexp) - 1))"
    m = f"({u} & ((1 << f.nmant) - 1))"
    normal = f"({e} > 0 OR f.nmant = 0)"
    magnitude = (
        f"(CASE WHEN {normal} THEN {m} + (1 << f.nmant) ELSE {m} END) * "
        f"(SELECT pow2 FROM _seq WHERE i = 2048 - f.bias - f.nmant + "
        f"(CASE WHEN {normal} THEN {e} ELSE 1 END))"
    )
    negative = f"(f.bits = 1 + f.nexp + f.nmant AND ({u} >> (f.bits - 1)) & 1)"
    top = "((1 << f.nexp) - 1)"
    small_float = (
        f"CASE WHEN f.special = 1 AND {e} = {top} "
        f"THEN CASE WHEN {m} = 0 THEN (CASE WHEN {negative} THEN -9e999 ELSE 9e999 END) END "
        f"WHEN f.special = 2 AND {e} = {top} AND {m} = (1 << f.nmant) - 1 THEN NULL "
        f"WHEN f.special = 3 AND {u} = (1 << (f.bits - 1)) THEN NULL "
        f"WHEN {negative} THEN -1.0 * {magnitude} ELSE {magnitude} END"
    )
    # float64: exponent and the 52-bit mantissa from bytes 4-7 and 0-3.
    e64 = "(b7.i % 128 * 16 + b6.i / 16)"
    m64 = f"(b6.i % 16 * 281474976710656 + b5.i * 1099511627776 + b4.i * 4294967296 + {u})"
    mag64 = (
        f"(CASE WHEN {e64} > 0 THEN {m64} + 4503599627370496 ELSE {m64} END) * "
        f"(SELECT pow2 FROM _seq WHERE i = 973 + (CASE WHEN {e64} > 0 THEN {e64} ELSE 1 END))"
    )
    float64 = (
        f"CASE WHEN {e64} = 2047 THEN CASE WHEN {m64} = 0 THEN "
        f"(CASE WHEN b7.i >= 128 THEN -9e999 ELSE 9e999 END) END "
        f"WHEN b7.i >= 128 THEN -1.0 * {mag64} ELSE {mag64} END"
    )
    value = (
        "CASE f.codec WHEN 'bytes' THEN substr(c.data, 1 + s.i * f.rowbytes, f.rowbytes) "
        f"WHEN 'bool' THEN b0.i WHEN 'float' THEN {small_float} "
        f"WHEN 'float64' THEN {float64} ELSE {integer} END"
    )
    lane = (
        "CASE WHEN c.lanes IS NULL THEN c.lane0 + s.i / c.nrows ELSE "
        + " + ".join(
            f"({_byte_at('c.lanes', f'4 * (s.i / c.nrows) + {k}')}) * {1 << (8 * k)}"
            for k in range(4)
        )
        + " END"
    )
    joins = "\n".join(_byte_join(k) for k in range(8))
    return f"""CREATE VIEW IF NOT EXISTS history AS
SELECT r.name AS run_name, r.status AS run_status, c.run AS run,
    {lane} AS lane,
    c.first + s.i % c.nrows AS step,
    f.name AS field,
    {value} AS value
FROM blocks AS c
JOIN runs AS r ON r.id = c.run
JOIN fields AS f ON f.run = c.run AND f.leaf = c.leaf
JOIN _seq AS s ON s.i < c.nlanes * c.nrows
{joins}"""


#: The ``history`` view (version 4).
VIEW = _view()


# ---------------------------------------------------------------------------- helpers
def dumps(value: object) -> str:
    """JSON, ASCII only: any ``str`` (NUL, lone surrogates) round-trips exactly."""
    return json.dumps(value, separators=(",", ":"))


def exact(text: str) -> str | list[str]:
    """``text`` for JSON such that `from_exact` gives it back exactly: itself, or, where it
    holds surrogate code points (JSON's decoder would join a high and a low one into one
    character), ``["utf-8", <hex of its bytes, surrogates kept apart>]``.

    >>> from_exact(exact("a\\ud800\\udc00")) == "a\\ud800\\udc00", exact("loss")
    (True, 'loss')
    """
    if not any("\ud800" <= ch <= "\udfff" for ch in text):
        return text
    return ["utf-8", text.encode("utf-8", "surrogatepass").hex()]


def from_exact(value: str | list[str]) -> str:
    """The text `exact` wrote."""
    if isinstance(value, str):
        return value
    return bytes.fromhex(value[1]).decode("utf-8", "surrogatepass")


def display(text: str) -> str:
    """``text`` as valid UTF-8 for SQL readers: a lone surrogate (a non-UTF-8 byte of a file
    name, say) is shown as its escape ``\\udcXX``; the exact text is kept as JSON beside it."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")
