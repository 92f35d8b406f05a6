"""Tests of jaxhist_widget.ui.reduce: the reductions a row goes through (numpy only)."""
