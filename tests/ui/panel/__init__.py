"""Tests of jaxhist_widget.ui.panel: the panel's traits, state and front-end bundle."""
