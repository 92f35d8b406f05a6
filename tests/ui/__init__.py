"""Tests of jaxhist_widget.ui."""
