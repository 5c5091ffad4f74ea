"""The tiny trained runs of the reliability tests, for the commands that read one."""

from ..reliability.conftest import files, runs  # noqa: F401 - fixtures reused here
