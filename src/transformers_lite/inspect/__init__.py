"""Inspection: the numbers behind the plots (``scores``) and the PNGs themselves (``plots``)."""
