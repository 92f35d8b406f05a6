"""The panel's front end as the one ES module anywidget loads.

The front end is written as small ES modules in ``js/`` (each one job; node's unit tests import
them one by one), by concern: ``base/`` (the look, formats, geometry, DOM helpers: pure or
nearly), ``panel/`` (the panel's DOM, its run list, its link to the kernel), ``charts/`` (what
the panel does to bqplot's charts: hover, highlight, chart tools, zoom), and the entry
``panel.js`` joining them. anywidget hands the browser a single module with no base URL to
resolve relative imports against, so `bundle` joins them: starting from the entry, each file
once, its dependencies first, with its ``import ... from "./x.js"`` (``"../base/x.js"``) lines
dropped (the names they import are then top-level names of the same module). A data table a
module imports as JSON (the look table, ``js/base/look.js``) is put in its place as a constant:
the browser loads no file, and the table stays the one the Python package reads. Nothing is
generated on disk and no build step runs at install time."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path

__all__ = ["bundle"]

# `import { a, b } from "./name.js";` (possibly over several lines). The front end imports
# nothing else: no package, no URL (users are often offline, and there is no bundler).
_IMPORT = re.compile(r'^import\s*\{[^}]*\}\s*from\s*"(?P<path>[^"]+)";[ \t]*\n', re.M)
# `import NAME from "path/table.json" with { type: "json" };`: a data table, by its file name.
_TABLE = re.compile(
    r'^import\s+(?P<name>\w+)\s+from\s*"(?P<path>[^"]*?(?P<file>[\w-]+\.json))"'
    r'\s+with\s*\{\s*type:\s*"json"\s*\};[ \t]*\n',
    re.M,
)
_ANY_IMPORT = re.compile(r"^\s*import\b", re.M)
# A file of the entry's folder or one below it: "./x.js", "./base/x.js", "../base/x.js".
_LOCAL = re.compile(r"(\./|\.\./)([\w-]+/)*[\w-]+\.js")


def bundle(entry: Path, tables: Mapping[str, Path] | None = None) -> str:
    """The module `entry` with every module it imports (transitively) inlined before it, and
    each JSON table a module imports (``tables``: its file name -> the file read) put in place
    of its import as a constant.

    A table is found by its file name, not by the path the import names: that path is the
    repository's (node's tests run from there), while an installed package keeps its tables
    elsewhere.

    Raises
    ------
    ValueError
        On an import that is not ``import { ... } from "./file.js"`` of a file in `entry`'s
        folder (or one below it) or a table of ``tables``, or on an import cycle: either would
        make a module the browser cannot load.
    """
    root = entry.parent.resolve()
    tables = dict(tables or {})
    done: list[str] = []  # file names in output order
    parts: list[str] = []
    visiting: list[str] = []

    def table(match: re.Match[str], name: str) -> str:
        file = match["file"]
        if file not in tables:
            raise ValueError(f"js/{name}: import {match['path']!r}: no such table")
        data = json.loads(tables[file].read_text(encoding="utf-8"))
        return f"const {match['name']} = {json.dumps(data, ensure_ascii=False)};\n"

    def add(name: str) -> None:
        # ``name``: the file's path from the entry's folder (``base/format.js``).
        if name in done:
            return
        if name in visiting:
            raise ValueError(f"js/: import cycle {' -> '.join([*visiting, name])}")
        visiting.append(name)
        source = (root / name).read_text(encoding="utf-8")
        for match in _IMPORT.finditer(source):
            path = match["path"]
            target = (root / name).parent.joinpath(path).resolve()
            if not _LOCAL.fullmatch(path) or not target.is_relative_to(root):
                raise ValueError(f"js/{name}: import {path!r}: only './file.js' of js/")
            add(target.relative_to(root).as_posix())
        body = _TABLE.sub(lambda m: table(m, name), _IMPORT.sub("", source))
        other = _ANY_IMPORT.search(body)
        if other:
            line = body[other.start() :].splitlines()[0]
            raise ValueError(f"js/{name}: unsupported import {line.strip()!r}")
        if name != entry.name and re.search(r"^export default\b", body, re.M):
            raise ValueError(f"js/{name}: only the entry {entry.name} may export default")
        visiting.pop()
        done.append(name)
        parts.append(f"// ---- js/{name}\n{body}")

    add(entry.name)
    return "\n".join(parts)
