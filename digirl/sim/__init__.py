"""The embedded simulated Android phone (pure Python: numpy + Pillow). See ``docs/simulator.md``.

``digirl.sim.env.SimEnv`` is the environment (ids ``digirl/sim-general-v0``, ``digirl/sim-webshop-v0``
and their ``-test`` variants); nothing is imported here so that registering the ids stays cheap.
"""
