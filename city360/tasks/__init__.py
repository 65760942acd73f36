"""city360.tasks: task families (seven built in, more as plugins), suites on disk, generators
and verification.

Light to import (pydantic only); generators, images and checks load on first use.
"""

from city360.tasks.families import (
    FamilySpec,
    all_families,
    get_family,
    parse_task,
    register_family,
    unregister_family,
)
from city360.tasks.families.landmark_image import LandmarkSearchImageTask
from city360.tasks.families.landmark_text import LandmarkSearchTextTask
from city360.tasks.families.localization import LocalizationTask
from city360.tasks.families.map_navigation import MapNavigationTask
from city360.tasks.families.object_count import ObjectCountTask
from city360.tasks.families.relational import RelationalSpatialTask
from city360.tasks.families.vln import VLNTask
from city360.tasks.prompts import answer_format, prompt_hash, render_prompt
from city360.tasks.schema import (
    DEFAULT_STEP_LIMIT,
    AgentTask,
    Difficulty,
    Family,
    Metric,
    MetricName,
    StartPose,
    Task,
    TaskBase,
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
    "parse_task",
    "prompt_hash",
    "register_family",
    "render_prompt",
    "save_suite",
    "unregister_family",
]
