"""Command-line interface (``digirl``)."""
