"""The smallest RLlib PPO run on a whist_env game: self-play with one shared masked policy.

What it shows:

* ``training.learn.rllib.ppo_config(game, **rule_options)``: RLlib's PPO (new API stack) on
  :class:`whist_env.wrappers.rllib.RLlibWhistEnv` (observations ``{"observations", "action_mask"}``,
  the mask as floats, as RLlib's action-masking module reads them), every seat mapped to one shared
  module, env runners x envs per runner;
* ``algo.train()`` iterations and what to read in their results: the per-agent returns (the sum over
  all agents, ``episode_return_mean``, is 0 in a zero-sum game) and the count of illegal actions
  taken (0: the mask is enforced);
* the trained policy written with ``training.learn.rllib.save_policy`` (weights as tensors, no
  pickle) and read back as the agent spec ``rllib:FOLDER``, which picks a legal card for an
  observation of the AEC env (``whist eval --agents rllib:FOLDER heuristic`` reads the same folder).

Needs the optional extra, in a venv of its own (ray pins its gymnasium)::

    pip install torch==2.13.0 && pip install -e ".[rllib]"
    python examples/rllib_ppo.py                    # 5 iterations of 2,048 env steps, 2 env runners
    python examples/rllib_ppo.py --smoke            # one tiny iteration, prints "ok: ..."
"""

from __future__ import annotations

import argparse
import tempfile


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", default="classic_whist")
    parser.add_argument("--iterations", type=int, default=5)
    parser.add_argument("--runners", type=int, default=2, help="env runners (processes)")
    parser.add_argument("--envs", type=int, default=4, help="envs per env runner")
    parser.add_argument("--smoke", action="store_true", help="one tiny iteration (seconds plus Ray's start-up)")
    args = parser.parse_args()

    import ray

    import whist_env
    from agents.registry import make_agent
    from training.learn.rllib.algorithm import ppo_config, save_policy, summarize

    iterations, batch, minibatch = (1, 256, 128) if args.smoke else (args.iterations, 2048, 512)
    if args.smoke:  # 256 steps over 2 envs: 128 steps each, so whole 52-step hands end in the iteration
        args.runners, args.envs = 1, 2
    ray.init(num_cpus=max(2, args.runners + 1), include_dashboard=False, logging_level="ERROR")
    try:
        config = ppo_config(args.game, num_env_runners=args.runners, num_envs_per_env_runner=args.envs,
                            train_batch_size=batch, minibatch_size=minibatch, seed=0)
        algo = config.build_algo()
        for i in range(iterations):
            summary = summarize(algo.train())
            print(f"iteration {i + 1}: {summary}")
        assert summary["episodes"] and summary["illegal_actions"] == 0, summary
        with tempfile.TemporaryDirectory() as folder:
            save_policy(algo, folder)
            algo.stop()
            agent = make_agent(f"rllib:{folder}", args.game)
            env = whist_env.GAMES[args.game].raw_env(episode="hand")
            env.reset(seed=1)
            seat = env.agent_selection
            seen = env.observe(seat)
            card = agent.act(seen, env.information_state(seat))
            assert seen["action_mask"][card] == 1
            print(f"ok: {iterations} PPO iteration(s) on {args.game}, no illegal action; the saved policy (rllib:FOLDER) "
                  f"plays {env.game.action_label(card)} for {seat}")
    finally:
        ray.shutdown()


if __name__ == "__main__":
    main()
