"""How a policy is asked for its action at a raw environment (DESIGN.md "Agents").

Most agents act from what their seat may know, handed to them: ``policy.act(observation,
information_state)``. A *search* agent (PIMC, IS-MCTS) also needs the environment itself, to
draw worlds with :meth:`WhistEnv.resample_from_infostate` and to step their :meth:`WhistEnv.clone`
copies; it says so by having a method ``act_in_env(env, agent)``
(:class:`whist_env.envs.policy_protocols.ActsInEnv`). Such an agent promises to use only those and
the acting agent's own observation and information state: never the hidden cards (the search
agents' tests check that their decisions do not change with them).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from whist_env.envs.policy_protocols import ActsInEnv


def policy_action(policy: Any, env: Any, agent: str, observation: Mapping[str, np.ndarray] | None = None) -> int:
    """The action ``policy`` chooses for ``agent`` at ``env`` (a raw environment whose
    ``agent_selection`` is ``agent``): ``policy.act_in_env(env, agent)`` for a search agent,
    else ``policy.act(observation, env.information_state(agent))``, the observation being
    ``env.observe(agent)`` unless the caller has it already. A search agent is one whose class
    implements :class:`~whist_env.envs.policy_protocols.ActsInEnv`. Returns an int; its legality
    is the caller's to check."""
    # asked of the class: this runs at every decision, where isinstance on a protocol costs tens of
    # microseconds (Python 3.11) and issubclass is answered from the ABC cache
    if issubclass(type(policy), ActsInEnv):
        return int(policy.act_in_env(env, agent))
    return int(policy.act(env.observe(agent) if observation is None else observation, env.information_state(agent)))
