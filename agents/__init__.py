"""Agents: policies that play the games (DESIGN.md ``agents/``), one room per kind.

==================  ===========================================================================
module / package    what it holds
==================  ===========================================================================
``base``            the :class:`~agents.base.Policy` protocol every agent implements
``registry``        agent specs (``"heuristic"``, ``"zoo:GAME"``, ``"pimc:worlds=16"``, ...): their
                    help text and ``make_agent``, the one place that knows every kind
``random_agent``    the uniform random baseline
``heuristics``      the rule-based players, one module per game, and the card-play knowledge
                    they share (``card_play``)
``learned``         loaders of learned policies: the network, whist-env checkpoints, the zoo,
                    stable-baselines3 zips, RLlib policies
``search``          PIMC and IS-MCTS, double-dummy solving, rollouts; the policies they need are
                    built by a factory they are handed, never imported from above
``zoo``             the shipped trained agents (package data: a checkpoint and a manifest a game)
==================  ===========================================================================

Imports inside ``agents`` point down this table's dependencies: ``registry`` may import every
kind; ``search`` imports neither ``registry``, ``heuristics`` nor ``learned``; ``heuristics`` and
``learned`` import neither ``registry`` nor ``search`` (``tests/test_layout.py`` checks it).
"""
