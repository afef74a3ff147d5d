"""Learning: agents trained from play.

=====================  ===========================================================================
module                 what it holds
=====================  ===========================================================================
``config``             the experiment YAML schema (pydantic), validated before anything runs
``ppo``                self-play PPO in one readable file (masked actor-critic, opponent pool, GAE
                       per seat)
``train``              ``whist train CONFIG``: a PPO run with checkpoints, tensorboard, in-training
                       and final duplicate-deal evaluation, clean stop on Ctrl-C / SIGTERM
``sb3``                ``whist sb3-train``: one seat trained with sb3-contrib MaskablePPO
``rllib``              RLlib's PPO ready for any game (``ppo_config``: masking module, shared or
                       per-side modules, fixed opponents, per-agent and per-opponent metrics)
``rllib_opponents``    an RLlib env whose other sides are played by any agent spec
``rllib_config``       the ``whist rllib-train`` YAML schema (pydantic; no Ray needed to check one)
``rllib_train``        ``whist rllib-train CONFIG``: RLlib PPO on a local Ray or a cluster,
                       tensorboard, checkpoints, clean stop, final duplicate-deal evaluation
=====================  ===========================================================================

The ``rllib*`` modules need the optional extra ``whist-env[rllib]``, except ``rllib_config``.
"""
