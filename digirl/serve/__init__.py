"""An OpenAI-compatible HTTP server for a saved policy of any kind (``digirl serve``).

:mod:`digirl.serve.protocol` turns chat-completion requests into observations and actions into
responses (every bad request is a :class:`~digirl.serve.protocol.RequestError` with a 4xx status);
:mod:`digirl.serve.batcher` gathers concurrent requests into one ``policy.act`` call;
:mod:`digirl.serve.server` is the HTTP layer (standard library ``ThreadingHTTPServer``).
See ``docs/serving.md``.
"""
