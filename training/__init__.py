"""Learning, evaluation and presentation on top of :mod:`whist_env` and :mod:`agents`.

==========================  ====================================================================
package / module            job
==========================  ====================================================================
:mod:`training.cli`         the ``whist`` command: each subcommand's arguments, and the call
                            into the package below that carries it out
:mod:`training.learn`       self-play PPO, experiment configs, ``whist train``, the SB3 path
:mod:`training.evaluation`  duplicate-deal matches, statistics, bidding statistics, results store,
                            ratings, league
:mod:`training.viewers`     plots, the HTML replay page, terminal play
:mod:`training.errors`      the errors a subcommand raises to end with a message and exit status
:mod:`training.progress`    progress of long jobs: a bar on a terminal, plain lines now and then
                            in a log (one policy for every command)
==========================  ====================================================================

Imports point down (DESIGN.md "Layers"): ``cli`` → ``learn`` and ``viewers`` → ``evaluation`` →
``agents`` → ``whist_env``; ``evaluation`` never imports ``learn`` or ``viewers``.
"""
