"""The ``tlite`` command line: one module per subcommand, each a thin layer over the Python API."""
