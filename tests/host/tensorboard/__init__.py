"""Tests of jaxhist_widget._host.tensorboard."""
