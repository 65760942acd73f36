"""city360.agents: the Agent protocol, the LMM ReAct agent and its providers, and baselines.

Contract: Agent, AgentDecision, Observation, TaskLike. LMM agent: LMMAgent, LMMConfig,
ControllerUnits, Provider, make_provider, RetryPolicy, EpisodeUsage, prompt_hash. Baselines:
RandomAgent, OracleAgent, MapReaderAgent, SignReaderAgent. Heavy imports (provider SDKs,
OpenCV, tesseract, the pose graph) happen on first use, not here.
"""

from city360.agents.base import Agent, AgentDecision, Observation, TaskLike
from city360.agents.lmm import LMMAgent, LMMConfig
from city360.agents.map_reader import MapReaderAgent
from city360.agents.oracle import OracleAgent
from city360.agents.prompts import ControllerUnits, prompt_hash
from city360.agents.providers import Provider, make_provider
from city360.agents.random_agent import RandomAgent
from city360.agents.retry import RetryPolicy
from city360.agents.sign_reader import SignReaderAgent
from city360.agents.usage import EpisodeUsage

__all__ = [
    "Agent",
    "AgentDecision",
    "ControllerUnits",
    "EpisodeUsage",
    "LMMAgent",
    "LMMConfig",
    "MapReaderAgent",
    "Observation",
    "OracleAgent",
    "Provider",
    "RandomAgent",
    "RetryPolicy",
    "SignReaderAgent",
    "TaskLike",
    "make_provider",
    "prompt_hash",
]
