"""Tests of jaxhist_widget.ui.look: the one look table and the rules that read it."""
