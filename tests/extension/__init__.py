"""Tests of jaxhist_widget.extension."""
