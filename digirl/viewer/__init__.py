"""``digirl view``: a web viewer of trajectories, their screenshots with the actions drawn, and what
the learner computed about each step (V, Q, advantage, kept; Digi-Q's candidates with their Q).

:mod:`digirl.viewer.source` reads a run folder or a dataset lazily and filters it (no Gradio);
:mod:`digirl.viewer.app` is the Gradio user interface (the ``viewer`` extra).
"""
