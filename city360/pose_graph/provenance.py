"""What a city's ``graph.json`` was built from, and whether the city still holds those inputs.

A build records, in the graph's ``build`` metadata, the trajectories it read and a digest of
each one's ``trajectory.json`` and ``poses.csv`` (:func:`trajectory_digests`). A failed build
leaves the previous ``graph.json`` in place (nothing is lost), and ingest can add, replace or
remove trajectories after a build; :func:`stale_reasons` says, in words a user acts on, where
the graph no longer describes the city's trajectories, and :meth:`BuiltGraph.describe` says
which build a command is about to read (when, with or without OSM, from how many
trajectories). ``city360 score`` and ``city360 build`` print both.

Graphs written before the digests existed carry only the trajectory list; for them the check
compares the lists and cannot see a trajectory re-ingested in place.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from city360.city import CityDir
from city360.errors import CityFormatError

__all__ = [
    "BuiltGraph",
    "StaleGraphWarning",
    "read_built_graph",
    "stale_reasons",
    "trajectory_digests",
]

DIGEST_HEX = 16
"""Hex digits kept of each trajectory's SHA-256 (64 bits: enough to tell an edit, short in
``graph.json``)."""


class StaleGraphWarning(UserWarning):
    """A command reads a ``graph.json`` that does not describe the city's trajectories as they
    are now (a failed build left the previous one, or ingest ran after the build)."""


def trajectory_digest(city: CityDir, trajectory_id: str) -> str:
    """Digest of what a build reads of one trajectory: ``trajectory.json`` then ``poses.csv``
    (``frames.mp4`` is not hashed: a build reads its frame count from ``trajectory.json``)."""
    digest = hashlib.sha256()
    for path in (city.trajectory_meta_path(trajectory_id), city.poses_path(trajectory_id)):
        digest.update(path.name.encode())
        digest.update(path.read_bytes() if path.is_file() else b"")
    return digest.hexdigest()[:DIGEST_HEX]


def trajectory_digests(city: CityDir, trajectory_ids: list[str]) -> dict[str, str]:
    """:func:`trajectory_digest` of each of ``trajectory_ids``, keyed by id."""
    return {tid: trajectory_digest(city, tid) for tid in trajectory_ids}


@dataclass(frozen=True)
class BuiltGraph:
    """The provenance of one ``graph.json``.

    ``written_utc`` is the file's modification time (UTC); ``digests`` maps each trajectory
    the build read to its :func:`trajectory_digest` (empty for graphs built before digests
    were recorded); ``osm`` is the city-relative extract the build matched (None without OSM).
    """

    path: Path
    written_utc: dt.datetime
    trajectories: tuple[str, ...]
    digests: Mapping[str, str]
    osm: str | None
    osm_network: str | None

    def describe(self) -> str:
        """One line: which build this is, e.g. ``graph.json (built 2026-12-05 09:12 UTC from
        74 trajectories, with OSM map/extract.osm, street network)``."""
        when = self.written_utc.strftime("%Y-%m-%d %H:%M UTC")
        count = len(self.trajectories)
        noun = "trajectory" if count == 1 else "trajectories"
        if self.osm is None:
            source = "without OSM"
        else:
            network = f", {self.osm_network} network" if self.osm_network else ""
            source = f"with OSM {self.osm}{network}"
        return f"{self.path} (built {when} from {count} {noun}, {source})"


def read_built_graph(city: CityDir) -> BuiltGraph | None:
    """The provenance of ``city``'s ``graph.json``; None when the city has none.

    Raises :class:`CityFormatError` when the file is not JSON.
    """
    path = city.graph_path
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        msg = f"{path}: not a readable graph ({exc}); rebuild it: `city360 build {city.root}`"
        raise CityFormatError(msg) from None
    build = (data.get("graph") or {}).get("build") or {}
    written = dt.datetime.fromtimestamp(path.stat().st_mtime, tz=dt.UTC)
    return BuiltGraph(
        path=path,
        written_utc=written,
        trajectories=tuple(str(t) for t in build.get("trajectories") or ()),
        digests={str(k): str(v) for k, v in (build.get("inputs") or {}).items()},
        osm=build.get("osm"),
        osm_network=build.get("osm_network"),
    )


def _names(ids: list[str], limit: int = 5) -> str:
    shown = ", ".join(ids[:limit])
    return shown + (f" and {len(ids) - limit} more" if len(ids) > limit else "")


def stale_reasons(city: CityDir, built: BuiltGraph) -> list[str]:
    """Where ``built`` no longer describes ``city``'s trajectories, one sentence each (empty
    when it does): trajectories added since the build, removed since, or changed in place."""
    now = city.trajectory_ids()
    then = list(built.trajectories)
    reasons: list[str] = []
    added = sorted(set(now) - set(then))
    removed = sorted(set(then) - set(now))
    if added:
        reasons.append(f"trajectories ingested after this build: {_names(added)}")
    if removed:
        reasons.append(f"trajectories of this build no longer in the city: {_names(removed)}")
    kept = [tid for tid in then if tid in set(now) and tid in built.digests]
    changed = [tid for tid in kept if trajectory_digest(city, tid) != built.digests[tid]]
    if changed:
        reasons.append(f"trajectories changed since this build: {_names(changed)}")
    return reasons
