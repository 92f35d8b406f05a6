"""Tests of jaxhist_widget._device.record."""
