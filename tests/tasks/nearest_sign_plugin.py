"""A plugin module: importing it registers the NearestSign family (what CITY360_PLUGINS names)."""

from city360.tasks.families import register_family
from tests.tasks.nearest_sign import SPEC

register_family(SPEC, replace=True)
