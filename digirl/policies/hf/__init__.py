"""The Hugging Face vision-language policy (``policy.kind=hf``).

Modules: :mod:`.geometry` (screen ⇄ model-image coordinates), :mod:`.prompt` (the chat prompt and
action texts), :mod:`.loading` (local folders → model + processor, never a download),
:mod:`.policy` (acting, scoring, saving), :mod:`.lora` (adapters and merging), :mod:`.vision`
(fast vision-tower attention and the frozen-vision feature cache). Only ``geometry`` and
``prompt`` import nothing heavy; the rest need the ``hf`` extra.
"""
