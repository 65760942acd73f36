"""The performance harness behind ``city360 bench`` (issue 11): one module per figure group.

``run`` plans and runs every measurement, ``cities`` builds (and caches) the cities they run on,
``report`` checks the figures against the targets and renders the table. Importing this package
is light; each module loads its heavy dependencies when it measures.
"""

from __future__ import annotations

__all__: list[str] = []
