"""An OpenAI-compatible HTTP server for a saved policy of any kind (``digirl serve``).

:mod:`digirl.serve.protocol` turns chat-completion requests into observations and actions into
responses (every bad request is a :class:`~digirl.serve.protocol.RequestError` with a 4xx status);
:mod:`digirl.serve.body` decodes JSON bodies under bounds (size, nesting, values, finite numbers)
and keeps the in-flight byte budget; :mod:`digirl.serve.batcher` gathers concurrent requests into
one ``policy.act`` call (a request that makes it fail fails alone);
:mod:`digirl.serve.connections` is a standard library HTTP server with a bounded connection pool;
:mod:`digirl.serve.server` is the HTTP layer.
See ``docs/serving.md``.
"""
