"""A screen VLM of digirl's own: pretrained from scratch on simulator data (``digirl vlm pretrain``).

Needs the ``hf`` extra. :mod:`digirl.vlm.data` makes the examples, :mod:`digirl.vlm.pretrain` trains
and writes a plain Hugging Face folder, :mod:`digirl.vlm.evaluate` measures it on held-out tasks.
"""
