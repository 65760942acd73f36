"""city360.tasks: the seven task families, suites on disk, generators and verification.

Light to import (pydantic only); generators, images and checks load on first use.
"""

from city360.tasks.families import FamilySpec, all_families, get_family
from city360.tasks.prompts import answer_format, prompt_hash, render_prompt
from city360.tasks.schema import (
    DEFAULT_STEP_LIMIT,
    AgentTask,
    Difficulty,
    Family,
    LandmarkSearchImageTask,
    LandmarkSearchTextTask,
    LocalizationTask,
    MapNavigationTask,
    Metric,
    MetricName,
    ObjectCountTask,
    RelationalSpatialTask,
    StartPose,
    Task,
    TaskBase,
    VLNTask,
)
from city360.tasks.suite import Suite, load_suite, save_suite

__all__ = [
    # schema
    "DEFAULT_STEP_LIMIT",
    "AgentTask",
    "Difficulty",
    "Family",
    # families and prompts
    "FamilySpec",
    "LandmarkSearchImageTask",
    "LandmarkSearchTextTask",
    "LocalizationTask",
    "MapNavigationTask",
    "Metric",
    "MetricName",
    "ObjectCountTask",
    "RelationalSpatialTask",
    "StartPose",
    # suites
    "Suite",
    "Task",
    "TaskBase",
    "VLNTask",
    "all_families",
    "answer_format",
    "get_family",
    "load_suite",
    "prompt_hash",
    "render_prompt",
    "save_suite",
]
