// The plot's one look (jaxhist_widget/ui/look/look.json): status words, number formats, palette,
// sizes. The Python package reads the same file; the panel's bundle
// (jaxhist_widget/ui/panel/_esm.py) puts the table itself in place of this import, so the
// browser loads no file. Its examples are checked on both sides: look.test.mjs here, and pytest.
import LOOK from "../../jaxhist_widget/ui/look/look.json" with { type: "json" };

export { LOOK };
