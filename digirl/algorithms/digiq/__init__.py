"""Digi-Q: a Q-function trained offline by TD on (fine-tuned) representations, best-of-N extraction.

Modules: ``functional`` (pure functions), ``config`` (``algo.digiq.*``), ``features`` (the feature
backend seam), ``sidecar`` (stage files), ``stages`` (propose, label, fine-tune, featurize),
``critic`` (twin Q / twin V heads) and ``algorithm`` (the ``algo.name=digiq`` update).
"""
