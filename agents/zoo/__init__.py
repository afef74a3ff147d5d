"""The shipped trained agents: package data only, ``<game>.pt`` and its manifest ``<game>.json``.

They are read through :mod:`agents.learned.zoo` (agent spec ``zoo:<game>``) and written by
``whist zoo-export`` (:mod:`training.learn.zoo`).
"""
