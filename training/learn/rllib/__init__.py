"""The RLlib path (Ray's RLlib, new API stack), beside the project's own PPO in ``training.learn``.

==============  ===========================================================================
module          what it holds
==============  ===========================================================================
``algorithm``   RLlib's PPO ready for any game (``ppo_config``: masking module, shared or
                per-side modules, fixed opponents; ``summarize``; ``save_policy``)
``opponents``   an RLlib env whose other sides are played by any agent spec
``config``      the ``whist rllib-train`` YAML schema (pydantic; no Ray needed to check one)
``train``       ``whist rllib-train CONFIG``: RLlib PPO on a local Ray or a cluster,
                tensorboard, checkpoints, clean stop, final duplicate-deal evaluation
==============  ===========================================================================

Every module but ``config`` needs the optional extra ``whist-env[rllib]``, in a venv of its own
(``ray[rllib]`` pins gymnasium). The env glue is :mod:`whist_env.wrappers.rllib`.
"""
