"""Collection spread over machines with Ray (``env.runner=ray``), see ``docs/distributed.md``.

Importing this package never imports Ray; the collector imports it when it is built.
"""
