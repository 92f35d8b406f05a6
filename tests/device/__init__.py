"""Tests of jaxhist_widget.device."""
