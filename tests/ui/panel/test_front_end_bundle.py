"""The panel's front end: small ES modules in js/, joined into the one module anywidget loads."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest

from jaxhist_widget.ui.look import LOOK, TABLE_PATH
from jaxhist_widget.ui.panel import ESM_PATH, TABLES, LivePanel, bundle

from ...helpers import ROOT

JS = ROOT / "js"
MODULES = sorted(p.relative_to(JS).as_posix() for p in JS.rglob("*.js"))


def _order(text: str) -> list[str]:
    return re.findall(r"^// ---- js/(\S+)$", text, re.M)


def test_the_bundle_holds_every_module_once_dependencies_first() -> None:
    text = LivePanel._esm
    assert isinstance(text, str)
    order = _order(text)
    assert sorted(order) == MODULES  # every module, each once
    assert order[-1] == "panel.js"  # the entry last: what it uses is defined above it
    for name in order:
        source = (JS / name).read_text()
        for path in re.findall(r'from "(\.\.?/[\w/-]+\.js)"', source):
            dep = (JS / name).parent.joinpath(path).resolve().relative_to(JS).as_posix()
            assert order.index(dep) < order.index(name), f"{dep} after {name}"
    assert not re.search(r"^\s*import\b", text, re.M)
    assert len(re.findall(r"^export default\b", text, re.M)) == 1


#: The folders of js/ and those each may import from (its own always): what every part uses,
#: the panel and its kernel link, what it does to the charts, and the entry (``.``) on top.
JS_PARTS = {
    "base": set(),
    "panel": {"base"},
    "charts": {"base", "panel"},
    ".": {"base", "panel", "charts"},
}


def _folder(name: str) -> str:
    return name.split("/")[0] if "/" in name else "."


def test_the_front_end_s_folders_import_one_way_and_stay_small() -> None:
    assert {_folder(name) for name in MODULES} == set(JS_PARTS)
    for name in MODULES:
        source = (JS / name).read_text()
        for path in re.findall(r'from "(\.\.?/[\w/-]+\.js)"', source):
            dep = (JS / name).parent.joinpath(path).resolve().relative_to(JS).as_posix()
            allowed = JS_PARTS[_folder(name)] | {_folder(name)}
            assert _folder(dep) in allowed, f"js/{name} imports js/{dep}"
    for folder in JS_PARTS:
        held = [name for name in MODULES if _folder(name) == folder]
        assert len(held) <= 12, f"js/{folder}/ holds {len(held)} modules"


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_the_bundle_loads_as_one_module(tmp_path: Path) -> None:
    # What the browser gets: one module with no base URL (so no relative import may be left).
    path = tmp_path / "bundle.mjs"
    path.write_text(bundle(ESM_PATH, TABLES))
    script = (
        f"const m = await import({str(path)!r});"
        "console.log(typeof m.default.render, typeof m.formatNumber, typeof m.bqplot.lineSets);"
        "console.log(JSON.stringify(m.LOOK));"
    )
    done = subprocess.run(
        ["node", "--input-type=module", "-e", script], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    kinds, table = done.stdout.splitlines()
    assert kinds.split() == ["function", "function", "function"]
    # The look table travels inside the module, the one the Python side reads.
    assert json.loads(table) == json.loads(TABLE_PATH.read_text())
    assert json.loads(table)["palette"] == list(LOOK["palette"])


def _write(folder: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (folder / name).write_text(text)
    return folder / "entry.js"


@pytest.mark.parametrize(
    ("files", "message"),
    [
        (
            {"entry.js": 'import { x } from "https://esm.sh/d3";\nexport default {};\n'},
            "only './file.js' of js/",
        ),
        ({"entry.js": 'import * as d3 from "d3";\nexport default {};\n'}, "unsupported import"),
        (
            {
                "entry.js": 'import { a } from "./a.js";\nexport default {};\n',
                "a.js": 'import { b } from "./b.js";\nexport const a = 1;\n',
                "b.js": 'import { a } from "./a.js";\nexport const b = 2;\n',
            },
            "import cycle entry.js -> a.js -> b.js -> a.js",
        ),
        (
            {
                "entry.js": 'import { a } from "./a.js";\nexport default {};\n',
                "a.js": "export const a = 1;\nexport default a;\n",
            },
            "only the entry entry.js may export default",
        ),
    ],
)
def test_a_module_the_browser_could_not_load_is_refused(
    tmp_path: Path, files: dict[str, str], message: str
) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        bundle(_write(tmp_path, files))


def test_a_json_table_is_inlined_by_its_file_name_and_an_unknown_one_refused(
    tmp_path: Path,
) -> None:
    (tmp_path / "table.json").write_text('{"words": {"converged": "finished"}}')
    entry = _write(
        tmp_path,
        {
            "entry.js": 'import { T } from "./t.js";\nexport default T;\n',
            "t.js": 'import T from "../elsewhere/table.json" with { type: "json" };\n'
            "export { T };\n",
        },
    )
    text = bundle(entry, {"table.json": tmp_path / "table.json"})
    assert 'const T = {"words": {"converged": "finished"}};' in text
    assert not re.search(r"^\s*import\b", text, re.M)
    with pytest.raises(ValueError, match=re.escape("'../elsewhere/table.json': no such table")):
        bundle(entry)


def test_a_module_imported_twice_is_inlined_once(tmp_path: Path) -> None:
    entry = _write(
        tmp_path,
        {
            "entry.js": 'import { a } from "./a.js";\nimport {\n  b,\n} from "./b.js";\n'
            "export default { a, b };\n",
            "a.js": 'import { c } from "./c.js";\nexport const a = c;\n',
            "b.js": 'import { c } from "./c.js";\nexport const b = c;\n',
            "c.js": "export const c = 3;\n",
        },
    )
    assert _order(bundle(entry)) == ["c.js", "a.js", "b.js", "entry.js"]


def test_a_wheel_ships_every_module() -> None:
    # The installed package loads js/ from jaxhist_widget/static/ (pyproject's force-include).
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    shipped = config["tool"]["hatch"]["build"]["targets"]["wheel"]["force-include"]
    for name in [*MODULES, "panel.css"]:
        assert shipped.get(f"js/{name}") == f"jaxhist_widget/static/{name}", name
