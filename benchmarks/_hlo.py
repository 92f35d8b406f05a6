"""What a compiled program is made of, read off XLA's text (``compile().as_text()``).

The benchmarks print it beside their timings, so that a difference in time can be traced to the
program's shape: how many loops and how deeply nested, conditionals, copies (those run every
step of the innermost loop apart), host calls, kernels.
"""

from __future__ import annotations

import math
import re
from typing import NamedTuple

#: Bytes per element of XLA's element types (``pred`` is a byte).
_BYTES = {"pred": 1, "s8": 1, "u8": 1, "f8": 1, "s16": 2, "u16": 2, "f16": 2, "bf16": 2}
_INSTRUCTION = re.compile(r"^\s+(?:ROOT )?%(\S+) = (.*?) ([a-z][\w-]*)\((.*)$")
_CALLED = re.compile(
    r"(?:body|condition|to_apply|calls|branch_computations)=\{?([^}\s]+(?:, %[^,}\s]+)*)"
)


class Structure(NamedTuple):
    """Counts of one compiled program (see `structure`)."""

    whiles: int  #: while loops
    depth: int  #: how deeply they nest: 1 a loop, 2 a loop in a loop
    conditionals: int
    copies: int  #: copy instructions anywhere
    step_copies: int  #: copies run at every step of the innermost loop
    step_copy_bytes: int  #: and the bytes they copy
    host_calls: int  #: custom calls into Python (a host callback)
    kernels: int  #: fusions: each one compiled to machine code of its own on CPU


class _Computation(NamedTuple):
    ops: list[tuple[str, str, str]]  #: (shape, opcode, operands and attributes) per line
    calls: list[str]  #: computations it calls
    identity: bool  #: it only passes its parameter on (a conditional's branch left untaken)


def structure(hlo: str) -> Structure:
    """The `Structure` of ``hlo``, XLA's text of one compiled program."""
    comps, entry = _computations(hlo)
    ops = [op for c in comps.values() for op in c.ops]
    step = _innermost_body(comps, entry)
    step_copies = _copies(comps, step) if step else []
    return Structure(
        whiles=sum(code == "while" for _, code, _ in ops),
        depth=_depth(comps, entry),
        conditionals=sum(code == "conditional" for _, code, _ in ops),
        copies=sum(code == "copy" for _, code, _ in ops),
        step_copies=len(step_copies),
        step_copy_bytes=sum(_nbytes(shape) for shape in step_copies),
        host_calls=sum(code == "custom-call" and "callback" in rest for _, code, rest in ops),
        kernels=sum(code == "fusion" for _, code, _ in ops),
    )


def _computations(hlo: str) -> tuple[dict[str, _Computation], str]:
    comps: dict[str, _Computation] = {}
    entry, name, ops, calls = "", None, [], []
    for line in hlo.splitlines():
        head = re.match(r"^(ENTRY )?%(\S+) .*\{\s*$", line)
        if head:
            name, ops, calls = head.group(2), [], []
            entry = name if head.group(1) else entry
            continue
        if line.startswith("}") and name is not None:
            kinds = {code for _, code, _ in ops}
            comps[name] = _Computation(
                ops, calls, kinds <= {"parameter", "get-tuple-element", "tuple", "copy"}
            )
            name = None
            continue
        m = _INSTRUCTION.match(line)
        if m and name is not None:
            ops.append((m.group(2), m.group(3), m.group(4)))
            for group in _CALLED.findall(m.group(4)):
                calls += [c.strip().lstrip("%") for c in group.split(",")]
    return comps, entry


def _depth(comps: dict[str, _Computation], name: str, seen: frozenset = frozenset()) -> int:
    """Loop nesting under computation ``name``."""
    comp = comps.get(name)
    if comp is None or name in seen:
        return 0
    here = 0
    for _, code, rest in comp.ops:
        inner = [c.strip().lstrip("%") for g in _CALLED.findall(rest) for c in g.split(",")]
        deepest = max((_depth(comps, c, seen | {name}) for c in inner), default=0)
        here = max(here, deepest + (code == "while"))
    return here


def _innermost_body(comps: dict[str, _Computation], name: str) -> str | None:
    """The body of the most deeply nested while loop under ``name`` (the step loop)."""
    best: tuple[int, str | None] = (0, None)

    def walk(name: str, level: int, seen: frozenset) -> None:
        nonlocal best
        comp = comps.get(name)
        if comp is None or name in seen:
            return
        for _, code, rest in comp.ops:
            body = re.search(r"body=%?([^,\s}]+)", rest) if code == "while" else None
            if body:
                if level + 1 > best[0]:
                    best = (level + 1, body.group(1))
                walk(body.group(1), level + 1, seen | {name})
            else:
                for g in _CALLED.findall(rest):
                    for c in g.split(","):
                        walk(c.strip().lstrip("%"), level, seen | {name})

    walk(name, 0, frozenset())
    return best[1]


def _copies(comps: dict[str, _Computation], name: str) -> list[str]:
    """The shapes copied each time computation ``name`` runs, through what it calls, but not
    in a branch that only passes its operand on (the step's branch not taken) or a loop."""
    comp = comps[name]
    out = [shape for shape, code, _ in comp.ops if code == "copy"]
    for _, code, rest in comp.ops:
        if code == "while":
            continue
        for g in _CALLED.findall(rest):
            for c in g.split(","):
                inner = comps.get(c.strip().lstrip("%"))
                if inner is not None and not inner.identity:
                    out += _copies(comps, c.strip().lstrip("%"))
    return out


def _nbytes(shape: str) -> int:
    """Bytes of an HLO shape such as ``f32[1024,2048]{1,0}`` (a tuple: its elements)."""
    total = 0
    for kind, dims in re.findall(r"([a-z]+\d*)\[([\d,]*)\]", shape):
        size = math.prod(int(d) for d in dims.split(",") if d) if dims else 1
        bits = re.search(r"\d+", kind)
        total += size * _BYTES.get(kind, int(bits.group()) // 8 if bits else 4)
    return total
