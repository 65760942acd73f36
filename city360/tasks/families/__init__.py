"""Task families as plugins: one module per family, found through a registry.

Each module holds one family's schema (told / truth / task models, with its prompt template,
answer format and metric on the task model), its generators (from ground truth, from OSM where
OSM can carry its truth), its checks and its viewer authoring form, and ends with a
:class:`FamilySpec` ``SPEC``. Importing this package registers the eight built-in families;
a plugin calls :func:`register_family` with its own spec (see docs/design-notes.md "Task
families as plugins").
"""

from city360.tasks.families import (
    errand,
    landmark_image,
    landmark_text,
    localization,
    map_navigation,
    object_count,
    relational,
    vln,
)
from city360.tasks.families._registry import (
    Author,
    Checker,
    DraftFields,
    EpisodeProgress,
    FamilySpec,
    Generator,
    all_families,
    family_names,
    get_family,
    parse_task,
    register_family,
    unregister_family,
)

__all__ = [
    # the registry
    "Author",
    "Checker",
    "DraftFields",
    "EpisodeProgress",
    "FamilySpec",
    "Generator",
    "all_families",
    "family_names",
    "get_family",
    "parse_task",
    "register_family",
    "unregister_family",
]

# Registration order is the order suites, reports and `tasks generate` list families in.
for _module in (
    localization,
    landmark_text,
    landmark_image,
    map_navigation,
    vln,
    object_count,
    relational,
    errand,
):
    register_family(_module.SPEC)
