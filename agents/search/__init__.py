"""Search agents: they plan over worlds drawn from their own information (DESIGN.md ``agents/``).

They act through ``act_in_env(env, agent)`` (see :func:`whist_env.envs.policy_action.policy_action`)
and read only the acting agent's observation and information state, the worlds of
``env.resample_from_infostate(agent, rng)`` and their ``clone()`` copies: never the hidden cards.
"""

from agents.search.alphamu import AlphaMuAgent
from agents.search.ismcts import ISMCTSAgent
from agents.search.pimc import PIMCAgent
from agents.search.spec import parse_options

__all__ = ["AlphaMuAgent", "ISMCTSAgent", "PIMCAgent", "parse_options"]
