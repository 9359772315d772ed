"""Developer tools run by ``make lint`` (not imported by the library)."""
