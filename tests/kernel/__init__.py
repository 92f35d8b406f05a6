"""Tests of jaxhist_widget.kernel."""
