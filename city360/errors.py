"""One exception hierarchy for city360.

Every error the package raises on purpose derives from :class:`City360Error`. Leaves also
subclass the builtin a caller would naturally catch (``ValueError``, ``FileNotFoundError``, ...)
so that ``except ValueError`` keeps working. Messages name the file, field or value at fault and
say how to fix it.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

__all__ = [
    "City360Error",
    "CityFormatError",
    "ClosedResourceError",
    "ConditionMissingError",
    "ConfigError",
    "DependencyMissingError",
    "FrameIndexError",
    "GpsError",
    "GraphBuildError",
    "InputFileError",
    "InputsChangedError",
    "OsmError",
    "OutputError",
    "PackagedCityBuildError",
    "ProviderAuthError",
    "ProviderError",
    "ProviderUnavailableError",
    "RenderError",
    "ResetNeededError",
    "RunLockedError",
    "TaskError",
    "UnknownActionError",
    "UnknownSegmentError",
    "VideoError",
    "WorkerError",
    "did_you_mean",
]


class City360Error(Exception):
    """Root of every error city360 raises on purpose."""


class ConfigError(City360Error, ValueError):
    """A parameter or option has a value that cannot work."""


class InputFileError(City360Error, FileNotFoundError):
    """An input file is missing, empty or unreadable."""


class OutputError(City360Error, OSError):
    """An output location cannot be written."""


class OsmError(City360Error, ValueError):
    """An OpenStreetMap extract is corrupt, empty, or does not cover the requested area."""


class VideoError(City360Error, ValueError):
    """A video is corrupt, truncated, empty, or not equirectangular."""


class GpsError(City360Error, ValueError):
    """A GPS track is unparseable, empty, degenerate, or does not overlap its video."""


class GraphBuildError(City360Error, ValueError):
    """Trajectories cannot be turned into a pose graph."""


class CityFormatError(City360Error, ValueError):
    """A city directory (manifest, graph, trajectories) is malformed or inconsistent."""


class ConditionMissingError(ConfigError):
    """A city has no variant for the visual condition asked for (the message lists those it
    has and the command that adds one)."""


class RenderError(City360Error, RuntimeError):
    """No rendering path could be set up, or rendering failed."""


class UnknownActionError(City360Error, ValueError):
    """An action or magnitude name is not one the controller knows."""


class ResetNeededError(City360Error, RuntimeError):
    """``step()`` was called before ``reset()`` or after the episode ended."""


class ClosedResourceError(City360Error, ValueError):
    """A method was called on a reader, store or renderer that is already closed."""


class FrameIndexError(City360Error, IndexError):
    """A frame index is outside a frame store or trajectory."""


class TaskError(City360Error, ValueError):
    """A task or task suite is malformed, inconsistent with its city, or unsolvable."""


class UnknownSegmentError(ConfigError, TaskError):
    """A segment id is not in the pose graph (a bad start or route option, or a task off the
    graph: both ``ConfigError`` and ``TaskError`` catch it)."""


class ProviderError(City360Error, RuntimeError):
    """An LMM provider is unknown, misconfigured or unreachable."""


class ProviderUnavailableError(ProviderError):
    """An LMM provider kept failing transiently (rate limit, 5xx, timeout, connection) after
    every retry; an infrastructure failure, not the agent's."""


class ProviderAuthError(ProviderError):
    """An LMM provider refused the API key (HTTP 401/403). Nothing the model did: a run stops
    at once instead of charging every remaining episode to the agent."""


class InputsChangedError(ConfigError):
    """A run's suite or city changed on disk while it ran (a worker read other bytes than the
    run recorded); the message names the file and the fix."""


class RunLockedError(City360Error, RuntimeError):
    """A run folder is being written by another process (its lock names the holder)."""


class WorkerError(City360Error, RuntimeError):
    """A worker process (a vector-env shard, a filming worker) failed or died; the message
    names it and what it was doing."""


class PackagedCityBuildError(City360Error, RuntimeError):
    """A step of building a packaged city (a ``city360`` command) failed; its output is above."""


class DependencyMissingError(City360Error, ImportError):
    """An optional dependency is not installed; the message says which extra brings it."""


def did_you_mean(value: str, allowed: Iterable[str]) -> str:
    """Return ``" Did you mean 'X'?"`` for the closest allowed value, or ``""``."""
    matches = difflib.get_close_matches(value, list(allowed), n=1, cutoff=0.5)
    return f" Did you mean '{matches[0]}'?" if matches else ""
