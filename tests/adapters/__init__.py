"""Tests of the library adapters (jaxhist_widget.optimistix, .diffrax, .jaxopt), with the real
libraries."""
