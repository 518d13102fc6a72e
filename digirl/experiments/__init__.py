"""Experiment drivers: Table 1 and its reports, the statistics they use, and the child runs they launch.

They drive :mod:`digirl.training` (the loop, SFT, evaluation, checkpoints) from outside; the library never imports
them back.
"""
