"""The CLI's ablations as environment and agent options (issue 19)."""

from __future__ import annotations

import pytest

from city360.errors import ConfigError
from city360.eval.ablations import Ablations


def test_defaults_change_nothing() -> None:
    none = Ablations()
    assert none.env_options() == {}
    assert none.agent_options("lmm") == {}
    assert none.label == "full"


def test_views_and_guidance_set_env_and_lmm_options() -> None:
    both = Ablations(use_map=False, views=4, route_guidance=True)
    assert both.env_options() == {"multiview": True, "route_guidance": True}
    assert both.agent_options("lmm") == {"views": 4}
    assert both.agent_options("oracle") == {}  # baselines look at the current view only
    assert both.label == "no-map+views4+guidance"


def test_views_out_of_range() -> None:
    with pytest.raises(ConfigError, match=r"`--views` must be in 1\.\.6, got 0"):
        Ablations(views=0)


def test_the_env_takes_the_options() -> None:
    from city360.simulator.config import EnvConfig

    config = EnvConfig.from_kwargs(**Ablations(views=2, route_guidance=True).env_options())
    assert config.multiview
    assert config.route_guidance
