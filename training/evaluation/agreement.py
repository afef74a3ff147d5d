"""Agreement of a student with a teacher (``whist agree``): how often the student would have
chosen the teacher's action, on the teacher's own games.

The teacher plays every seat of match deals (deal ``i`` dealt from the match seed as in
:mod:`training.evaluation.match`, so held-out deals are those of ``REPORT`` or ``DEVELOPMENT``
seeds, never a training deal); at each decision with more than one legal action the student is
asked too, and the two actions are compared. The agreement is counted over all such decisions
and by phase (bidding phases apart from card play). Decisions of one deal are not independent,
so the 95% interval is the ratio estimator's over deals (linearised variance, normal quantile),
not a binomial one over decisions.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy.stats import norm

from agents.base import Reseedable
from training.errors import CommandError
from training.evaluation.stats import CONFIDENCE
from whist_env.envs.policy_action import policy_action


@dataclass
class Agreement:
    """Agreement over a set of deals.

    Attributes:
        decisions: decisions with more than one legal action (int). agreed: of them, where the
            student chose the teacher's action (int). deals: deals played (int).
        by_phase: phase -> ``[agreed, decisions]``.
        per_deal: ``[agreed, decisions]`` of each deal (for the interval).
    """

    decisions: int = 0
    agreed: int = 0
    deals: int = 0
    by_phase: dict[str, list[int]] = field(default_factory=dict)
    per_deal: list[tuple[int, int]] = field(default_factory=list)

    @property
    def share(self) -> float:
        """``agreed / decisions`` (NaN without decisions)."""
        return self.agreed / self.decisions if self.decisions else float("nan")

    def interval(self) -> tuple[float, float]:
        """95% interval (``stats.CONFIDENCE``) of the share: the ratio estimator over deals, normal
        quantile (``(nan, nan)`` below two deals)."""
        k = len(self.per_deal)
        if k < 2 or not self.decisions:
            return float("nan"), float("nan")
        r = self.share
        mean_n = self.decisions / k
        var = sum((a - r * n) ** 2 for a, n in self.per_deal) / (k * (k - 1) * mean_n**2)
        half = float(norm.ppf(0.5 + CONFIDENCE / 2)) * math.sqrt(var)
        return max(0.0, r - half), min(1.0, r + half)


class AgreementPlayer:
    """Plays deals for :func:`measure_agreement` (picklable for worker processes)."""

    def __init__(self, game: str, options: Mapping[str, Any], teacher: str, student: str, seed: int) -> None:
        self.game, self.options, self.specs, self.seed = game, dict(options), (teacher, student), seed
        self._built: tuple[Any, Any, Any] | None = None

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "_built": None}

    def build(self) -> tuple[Any, Any, Any]:
        """``(raw env, teacher, student)``, built on first use.

        Raises:
            ValueError: a bad agent spec or rule option.
        """
        from agents.registry import make_agent
        from whist_env import GAMES

        if self._built is None:
            env = GAMES[self.game].raw_env(**self.options)
            self._built = (env, make_agent(self.specs[0], self.game, seed=0), make_agent(self.specs[1], self.game, seed=1))
        return self._built

    def play(self, index: int) -> tuple[int, dict[str, list[int]]]:
        """``(deal seed, phase -> [agreed, decisions])`` of deal ``index``."""
        from training.evaluation.match import _deal_seed

        env, teacher, student = self.build()
        sub = np.random.SeedSequence([self.seed, index]).generate_state(2)
        for agent, s in ((teacher, sub[0]), (student, sub[1])):
            if isinstance(agent, Reseedable):
                agent.reseed(int(s))
        deal_seed = _deal_seed(self.seed, index)
        env.reset(seed=deal_seed)
        counts: dict[str, list[int]] = {}
        for agent in env.agent_iter():
            if env.terminations[agent] or env.truncations[agent]:
                env.step(None)
                continue
            ob = env.observe(agent)
            action = int(policy_action(teacher, env, agent, ob))
            if int(ob["action_mask"].sum()) > 1:
                phase = env.game.phase
                other = int(policy_action(student, env, agent, ob))
                entry = counts.setdefault(phase, [0, 0])
                entry[0] += other == action
                entry[1] += 1
            env.step(action)
        return deal_seed, counts


def measure_agreement(game: str, teacher: str, student: str, deals: int, seed: int, options: Mapping[str, Any] | None = None,
                      workers: int = 1, ray_address: str | None = None, progress: bool = True) -> Agreement:
    """The agreement of ``student`` with ``teacher`` (agent specs) over ``deals`` deals of the
    match seed ``seed``, under ``options`` merged over ``episode: hand``.

    Raises:
        ValueError: ``deals < 1``, ``workers < 1``, a bad spec or option.
    """
    from training.evaluation.parallel import played_units
    from training.progress import progress_bar

    if deals < 1 or workers < 1:
        raise ValueError(f"deals and workers must be >= 1, got {deals} and {workers}")
    player = AgreementPlayer(game, {"episode": "hand", **dict(options or {})}, teacher, student, seed)
    player.build()  # here first: a bad spec fails before any worker starts
    result = Agreement()
    bar = progress_bar(total=deals, desc=f"agreement {student} with {teacher}", unit="deal", disable=not progress,
                       dynamic_ncols=True)
    try:
        with played_units(player, list(range(deals)), workers, ray_address) as outcomes:
            for _, counts in outcomes:
                agreed = sum(a for a, _ in counts.values())
                total = sum(n for _, n in counts.values())
                result.per_deal.append((agreed, total))
                result.agreed += agreed
                result.decisions += total
                result.deals += 1
                for phase, (a, n) in counts.items():
                    entry = result.by_phase.setdefault(phase, [0, 0])
                    entry[0] += a
                    entry[1] += n
                bar.update(1)
                bar.set_postfix({"agree": f"{result.share:.3f}"}, refresh=False)
    finally:
        bar.close()
    return result


def format_agreement(result: Agreement, teacher: str, student: str) -> str:
    """The agreement as a few lines of text: overall with its interval, then by phase."""
    low, high = result.interval()
    lines = [f"{student} agrees with {teacher} on {result.share:.2%} [{low:.2%}, {high:.2%}] of {result.decisions:,} "
             f"decisions with a choice ({result.deals:,} deals)"]
    for phase, (a, n) in sorted(result.by_phase.items()):
        lines.append(f"  {phase}: {a / n:.2%} of {n:,}")
    return "\n".join(lines)


def run_agree(args: Any) -> int:
    """``whist agree``: print the agreement of ``--student`` with ``--teacher``."""
    from training.evaluation.seed_ranges import DEVELOPMENT, REPORT

    if not (args.seed in REPORT or args.seed in DEVELOPMENT):
        raise CommandError(f"--seed {args.seed:,} is not a match seed: agreement is measured on deals of {REPORT} or {DEVELOPMENT}")
    try:
        result = measure_agreement(args.game, args.teacher, args.student, args.deals, args.seed, dict(args.option),
                                   workers=args.workers, ray_address=args.ray, progress=not args.quiet)
    except (ValueError, OSError) as err:
        raise CommandError(str(err)) from None
    print(format_agreement(result, args.teacher, args.student))
    return 0


__all__ = ["Agreement", "measure_agreement", "format_agreement", "run_agree"]
