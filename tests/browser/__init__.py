"""Browser tests against a real JupyterLab 4 / Notebook 7 server (marker: ``ui``).

A package so that helpers can be imported relatively and test module names do
not clash with those in ``tests/``.
"""
