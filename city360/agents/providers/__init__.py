"""LMM providers behind one small interface (see ``base``); built by ``make_provider``."""

from city360.agents.providers.base import ChatReply, ChatRequest, Provider
from city360.agents.providers.registry import PROVIDER_NAMES, make_provider

__all__ = ["PROVIDER_NAMES", "ChatReply", "ChatRequest", "Provider", "make_provider"]
