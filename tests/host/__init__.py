"""Tests of jaxhist_widget.host."""
