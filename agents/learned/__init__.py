"""Loaders of learned policies (DESIGN.md ``agents/``): everything that turns a trained model
into an agent.

===============  ==========================================================================
module           what it holds
===============  ==========================================================================
``network``      the actor-critic network (masked policy, optional bid head, suit relabelling)
``checkpoint``   whist-env checkpoints: atomic save, safe load (``weights_only``), formats
``neural``       ``NeuralAgent``: a checkpoint's actor as an agent (``checkpoint:PATH``)
``zoo``          the model zoo: where the shipped agents lie and their manifests (``zoo:GAME``)
``sb3``          ``SB3Agent``: a stable-baselines3 MaskablePPO zip (``sb3:PATH``)
``rllib``        ``RLlibAgent``: an RLlib policy saved without pickles (``rllib:PATH``; Ray)
===============  ==========================================================================

A new learned-policy format is one module here and one spec kind in :mod:`agents.registry`.
"""
