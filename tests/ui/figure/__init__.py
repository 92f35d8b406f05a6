"""Tests of jaxhist_widget.ui.figure: the live bqplot figure and its marks."""
