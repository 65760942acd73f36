"""city360.agents: the Agent protocol, the LMM ReAct agent and its providers, and baselines.

Heavy SDK imports happen when a provider is made, not here.
"""

from city360.agents.base import Agent, AgentDecision, Observation, TaskLike
from city360.agents.lmm import LMMAgent, LMMConfig
from city360.agents.prompts import prompt_hash
from city360.agents.providers import Provider, make_provider
from city360.agents.retry import RetryPolicy
from city360.agents.usage import EpisodeUsage

__all__ = [
    # contract
    "Agent",
    "AgentDecision",
    # LMM agent
    "EpisodeUsage",
    "LMMAgent",
    "LMMConfig",
    "Observation",
    "Provider",
    "RetryPolicy",
    "TaskLike",
    "make_provider",
    "prompt_hash",
]
