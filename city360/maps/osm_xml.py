"""Write OSM XML (``.osm``) from plain nodes and ways: for generated street grids (tests,
benchmarks) that go through the same loader as real extracts."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from xml.sax.saxutils import quoteattr

__all__ = ["osm_xml"]

OsmNode = tuple[int, float, float, Mapping[str, str]]
"""``(id, lat, lon, tags)``."""
OsmWay = tuple[int, Sequence[int], Mapping[str, str]]
"""``(id, node ids, tags)``."""


def osm_xml(nodes: Iterable[OsmNode], ways: Iterable[OsmWay], *, generator: str = "city360") -> str:
    """The OSM 0.6 XML document for ``nodes`` and ``ways`` (degrees with 9 decimals)."""
    lines = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        f'<osm version="0.6" generator={quoteattr(generator)}>',
    ]
    for node_id, lat, lon, tags in nodes:
        head = f'  <node id="{node_id}" version="1" lat="{lat:.9f}" lon="{lon:.9f}"'
        if not tags:
            lines.append(head + "/>")
            continue
        lines.append(head + ">")
        lines += [f"    <tag k={quoteattr(k)} v={quoteattr(v)}/>" for k, v in tags.items()]
        lines.append("  </node>")
    for way_id, refs, tags in ways:
        lines.append(f'  <way id="{way_id}" version="1">')
        lines += [f'    <nd ref="{ref}"/>' for ref in refs]
        lines += [f"    <tag k={quoteattr(k)} v={quoteattr(v)}/>" for k, v in tags.items()]
        lines.append("  </way>")
    lines.append("</osm>")
    return "\n".join(lines) + "\n"
