"""Training agents on a city: the PPO smoke test and the small pieces it is made of.

Nothing here imports torch or stable-baselines3 at import time; only
:mod:`city360.train.sb3_vec` and :mod:`city360.train.ppo_smoke`'s training step need them
(``pip install 'city360[train]'``). The pieces a test can run without them:

- :mod:`city360.train.nav_actions`: the compact discrete action set of a navigation policy and
  its observation (the told goal, offered branches, legal actions, optionally the view);
- :mod:`city360.train.task_split`: training tasks and held-out evaluation tasks;
- :mod:`city360.train.evaluate`: success rate and mean return of any policy on held-out tasks;
- :mod:`city360.train.curve`: the learning curve as CSV and PNG.
"""

from __future__ import annotations

__all__: list[str] = []
