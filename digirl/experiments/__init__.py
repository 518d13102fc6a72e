"""Experiment drivers: Table 1 and its reports, the statistics they use, the child runs they launch, and
Digi-Q's analyses (the critic against simulator ground truth, the static Q/V report).

They drive :mod:`digirl.training` (the loop, SFT, evaluation, checkpoints) from outside; the library never imports
them back.
"""
