"""Tests of jaxhist_widget.ui.series: what a plot draws of a run (options, windows, smoothing)."""
