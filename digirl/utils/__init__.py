"""Small shared utilities, imported by their module path (importing this package loads nothing):

- :mod:`digirl.utils.images` — ``resize``: Pillow's resize with the same pixels under every Pillow version
- :mod:`digirl.utils.metrics` — ``MetricsLogger`` (JSONL + TensorBoard + W&B), ``read_metrics``, ``timed``
- :mod:`digirl.utils.progress` — ``progress()``: a rich bar on a TTY, periodic log lines elsewhere
- :mod:`digirl.utils.rng` — ``seed_everything``, ``get_rng_state`` / ``set_rng_state`` (JSON-safe)
"""
