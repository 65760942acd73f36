"""The registry of task families, by name, and the one parser of a task's JSON.

A family is one :class:`FamilySpec`: its task model (schema, prompt, answer format and metric
live on the model), whether the agent must walk to a goal, its generators, its checks and its
authoring form. Everything that loops over families (suite loading, generators, ``tasks
check``, prompts, statistics, the viewer's Author screen, eval) asks :func:`get_family` /
:func:`all_families`, so adding a family is one module that calls :func:`register_family`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from city360.errors import TaskError, did_you_mean
from city360.plugins import load_plugins
from city360.tasks.schema import PromptRules, TaskBase

if TYPE_CHECKING:
    from city360.streets import StreetGraph
    from city360.tasks.check import CheckContext, CheckIssue
    from city360.tasks.generate.common import GenerationContext, GenerationReport
    from city360.tasks.generate.sources import GenerationSource
    from city360.tasks.walk import OracleResult
    from city360.viewer.authoring import DraftForm

__all__ = [
    "Author",
    "Checker",
    "DraftFields",
    "EpisodeProgress",
    "FamilySpec",
    "Generator",
    "Planner",
    "ProgressFactory",
    "ProtocolImages",
    "all_families",
    "family_names",
    "get_family",
    "parse_task",
    "register_family",
    "unregister_family",
]

Generator = Callable[
    ["GenerationContext", "GenerationSource", int, "GenerationReport"], list[TaskBase]
]
"""``(ctx, source, n, report) -> tasks``: up to ``n`` tasks; rejected candidates and notes go to
``report``, pictures to ``ctx.assets``."""
Checker = Callable[[TaskBase, "CheckContext"], list["CheckIssue"]]
"""Family-specific checks of one task against its city (navigation reachability is common)."""
Author = Callable[["DraftForm"], "tuple[dict[str, Any], dict[str, Any]]"]
"""The viewer's draft -> the task's ``told`` and ``truth`` (as dicts for the model)."""
DraftFields = Callable[[TaskBase], dict[str, Any]]
"""A saved task -> its family's form fields (the inverse of :data:`Author`)."""
Planner = Callable[[TaskBase, "StreetGraph", Sequence[float]], "OracleResult"]
"""``(task, graph, move_m) -> the oracle's walk`` of a navigation task whose oracle is not one
plan to ``truth.goal`` from the start (Errand: the tour through every waypoint in order, each
leg free to begin by turning round)."""
ProtocolImages = Callable[[TaskBase, "PromptRules", Any], dict[str, Any]]
"""``(task, rules, city_map) -> {told image field: RGB image}``: pictures a protocol shows in
place of the suite's (Localization: a grid map numbered from 0 under the reference)."""


class EpisodeProgress(Protocol):
    """Follows one episode's exact poses (metres, city CRS) and says what the agent reached
    on the way: the recorder records :meth:`values` in the row's ``extra`` and hands them to
    the metric (:attr:`city360.eval.metrics.ScoringContext.progress`)."""

    def update(self, x_m: float, y_m: float) -> None: ...

    def values(self) -> dict[str, float]: ...


ProgressFactory = Callable[[TaskBase], EpisodeProgress]
"""``task -> tracker`` of one episode (Errand: checkpoint coverage)."""


@dataclass(frozen=True, slots=True)
class FamilySpec:
    """One family. ``navigation`` families are scored by where the agent ANSWERs (``threshold_m``
    metres from the goal, from the model's default metric); the others by the answer text.

    ``from_truth`` makes tasks from a synthetic city's ground truth, ``from_osm`` from a real
    city's graph and OSM places (None, with ``osm_note`` saying why, when OSM cannot carry the
    family's truth).
    """

    model: type[TaskBase]
    short: str
    """Short id prefix used by generators (``loc``, ``lmt``, ...)."""
    navigation: bool = False
    away_from_goal: bool = False
    """Stop the episode after ``StopConfig.away_steps`` consecutive moves away from the goal
    (DESIGN.md stop rules: map navigation)."""
    from_truth: Generator | None = None
    from_osm: Generator | None = None
    osm_note: str = ""
    check: Checker | None = None
    author: Author | None = None
    draft_fields: DraftFields | None = None
    location_map: bool = True
    """False when the location map would give the answer away (Localization): no protocol
    shows it then."""
    goal_told: bool = False
    """True when the agent is told where its goal is (Map navigation: a map with the RED goal);
    only then may a learner's ``goal`` observation (``simulator.learning_obs``) carry it."""
    protocol_images: ProtocolImages | None = None
    instructed_route: bool = False
    """True when the agent is told the route to walk (VLN's directions): SPL then measures
    against that route (``truth.route``); otherwise against the shortest walk."""
    progress: ProgressFactory | None = None
    """What an episode reached on its way, beyond where it ended (Errand: the waypoints in
    order); None: nothing to follow."""
    plan: Planner | None = None
    """The oracle's walk of a navigation task when it is not the fewest steps to
    ``truth.goal`` (:func:`city360.tasks.walk.oracle_walk`): ``tasks check`` proves
    reachability with the plan the family's generator and the oracle agent use. A family with
    a plan reports an unreachable goal from its ``check`` (naming what is out of reach)."""
    results_name: str = ""
    """The family's ``task_type`` in results.csv: the reference benchmark's name for it
    (``LanguageGuidedNavigation`` for VLN); empty: :attr:`name`."""

    @property
    def reported_name(self) -> str:
        return self.results_name or self.name

    @property
    def name(self) -> str:
        """The family's name as task files spell it (the model's ``family`` default)."""
        return str(self.model.model_fields["family"].default)

    @property
    def family(self) -> str:
        """Alias of :attr:`name`."""
        return self.name

    @property
    def metric(self) -> str:
        return str(self.model.EXPECTED_METRIC)

    @property
    def threshold_m(self) -> float | None:
        """The default success radius of a navigation family (metres), else None."""
        default = self.model.model_fields["metric"].default
        return getattr(default, "threshold_m", None)

    @property
    def template(self) -> str:
        return self.model.PROMPT_TEMPLATE

    @property
    def answer_format(self) -> str:
        return self.model.ANSWER_FORMAT


_REGISTRY: dict[str, FamilySpec] = {}


def register_family(spec: FamilySpec, *, replace: bool = False) -> FamilySpec:
    """Register ``spec`` under its name; an existing name needs ``replace=True``."""
    name = spec.name
    if not name or name == "None":
        msg = f"{spec.model.__name__}.family needs a default: Literal['Name'] = 'Name'"
        raise TaskError(msg)
    if name in _REGISTRY and not replace and _REGISTRY[name] != spec:
        msg = f"task family {name!r} is already registered; pass replace=True to replace it"
        raise TaskError(msg)
    _REGISTRY[name] = spec
    return spec


def unregister_family(name: str) -> None:
    """Remove a family (tests that register their own clean up with this)."""
    _REGISTRY.pop(str(name), None)


def family_names() -> list[str]:
    load_plugins()
    return list(_REGISTRY)


def _unknown(name: str) -> TaskError:
    known = family_names()
    msg = f"unknown task family {name!r}; expected one of {', '.join(known)}."
    return TaskError(msg + did_you_mean(name, known))


def get_family(name: str) -> FamilySpec:
    """The spec of a family by name (``"VLN"``, ``Family.VLN``); unknown names raise
    :class:`TaskError` listing the known ones and a close match. A name not registered yet
    loads the plugins (:mod:`city360.plugins`) before it is called unknown."""
    key = str(name)
    if key not in _REGISTRY:
        load_plugins()
    try:
        return _REGISTRY[key]
    except KeyError:
        raise _unknown(key) from None


def all_families() -> list[FamilySpec]:
    """Every registered family, in registration order."""
    load_plugins()
    return list(_REGISTRY.values())


def parse_task(raw: Any) -> TaskBase:
    """A task from its JSON object, validated by its family's model (picked by ``family``).

    Raises :class:`TaskError` for a missing or unknown family and pydantic's
    ``ValidationError`` for a bad field (``city360.tasks.suite`` turns both into lines naming
    the file, task id and field).
    """
    if not isinstance(raw, dict):
        msg = f"a task must be a JSON object, got {type(raw).__name__}"
        raise TaskError(msg)
    family = raw.get("family")
    if family is None:
        msg = "Field required"
        raise TaskError(msg)
    return get_family(str(family)).model.model_validate(raw)
