"""Tests of jaxhist_widget.ui.plot: LivePlot and what joins its parts."""
