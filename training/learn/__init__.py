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
``rllib``              the RLlib path (a package: PPO config, opponents inside the env, the
                       ``whist rllib-train`` schema and run)
=====================  ===========================================================================

``rllib`` needs the optional extra ``whist-env[rllib]``, except ``rllib.config``.
"""
