"""Tests of jaxhist_widget.ui.picture: the static picture and the notebooks that carry it."""
