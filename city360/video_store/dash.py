"""A DASH presentation saved to disk, read as one video.

A 360° video downloaded from a streaming site is often a DASH presentation: a manifest
(``.mpd``, XML) beside an initialization segment (``init.mp4``) and media segments
(``segment_0.m4s``, ...). The initialization segment followed by the media segments, byte for
byte, is one fragmented MP4, which :mod:`.stream_parts` reads as one video.

:func:`read_dash` resolves the manifest's video segments to local files: ``SegmentTemplate``
(``$Number$``, ``$Time$`` with a ``SegmentTimeline``, ``$RepresentationID$``,
``$Bandwidth$``, ``%0Nd`` widths), ``SegmentList`` and a single-file ``BaseURL``. Of several
qualities it takes the best one whose files are there. Segments are taken in order up to the
first one missing, and :attr:`StreamParts.listed` says how many the manifest lists, so a partial
download ingests what it has and the caller can say what is left out.

Written with the standard library's XML parser rather than a DASH package: the one on PyPI
(``mpegdash``) parses the XML into objects but does not expand templates into file names,
which is the whole job here. Remote segment addresses are refused with the file name only
(signed streaming URLs carry tokens, which an error must not print).
"""

from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlsplit

from city360.errors import ConfigError, InputFileError
from city360.video_store.stream_parts import StreamParts, local_name

__all__ = ["DASH_SUFFIXES", "read_dash"]

DASH_SUFFIXES = frozenset({".mpd"})
"""Suffixes of DASH manifests."""

_TEMPLATE_RE = re.compile(r"\$(RepresentationID|Number|Time|Bandwidth)(%0(\d+)d)?\$")
_DURATION_RE = re.compile(
    r"P(?:(?P<y>[\d.]+)Y)?(?:(?P<mo>[\d.]+)M)?(?:(?P<d>[\d.]+)D)?"
    r"(?:T(?:(?P<h>[\d.]+)H)?(?:(?P<mi>[\d.]+)M)?(?:(?P<s>[\d.]+)S)?)?$"
)


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def _child(element: ET.Element | None, name: str) -> ET.Element | None:
    if element is None:
        return None
    return next((c for c in element if _local(c.tag) == name), None)


def _children(element: ET.Element, name: str) -> list[ET.Element]:
    return [c for c in element if _local(c.tag) == name]


def _seconds(value: str | None) -> float | None:
    """An ISO 8601 duration (``PT2M17.000S``) in seconds; None if absent or unreadable."""
    match = _DURATION_RE.match(value.strip()) if value else None
    if match is None:
        return None
    factors = {
        "y": 365 * 86400.0,
        "mo": 30 * 86400.0,
        "d": 86400.0,
        "h": 3600.0,
        "mi": 60.0,
        "s": 1.0,
    }
    return sum(float(v) * factors[k] for k, v in match.groupdict().items() if v)


def _is_video(adaptation: ET.Element, representation: ET.Element) -> bool:
    kinds = " ".join(
        element.get(key, "")
        for element in (adaptation, representation)
        for key in ("mimeType", "contentType")
    )
    if "video" in kinds:
        return True
    if "audio" in kinds or "text" in kinds or "image" in kinds:
        return False
    return representation.get("width") is not None or adaptation.get("width") is not None


def _base_path(chain: list[ET.Element]) -> str:
    """The relative folder the BaseURLs of ``chain`` (MPD down to Representation) set, or
    for a BaseURL naming one file, that file. A remote (http) level resets it: a saved
    presentation keeps the files beside the manifest."""
    path = ""
    for element in chain:
        base = _child(element, "BaseURL")
        text = (base.text or "").strip() if base is not None else ""
        if not text:
            continue
        split = urlsplit(text)
        if split.scheme in ("http", "https"):
            path = "" if text.endswith("/") else local_name(text)
        elif text.startswith("/"):
            path = unquote(split.path).lstrip("/")  # server-absolute: kept below the folder
        else:
            path += unquote(split.path)
    return path


def _expand(template: str, representation: ET.Element, number: int, time: int) -> str:
    """``template`` with its ``$...$`` identifiers (ISO/IEC 23009-1, 5.3.9.4.4) filled in."""
    values = {
        "RepresentationID": representation.get("id", ""),
        "Number": str(number),
        "Time": str(time),
        "Bandwidth": representation.get("bandwidth", ""),
    }

    def put(match: re.Match[str]) -> str:
        value = values[match.group(1)]
        width = match.group(3)
        return f"{int(value):0{int(width)}d}" if width and value.isdigit() else value

    return _TEMPLATE_RE.sub(put, template.replace("$$", "\x00")).replace("\x00", "$")


@dataclass(frozen=True, slots=True)
class _Template:
    """A SegmentTemplate as it applies to one representation: the attributes of every level,
    inner ones overriding outer ones, and the innermost SegmentTimeline."""

    attributes: dict[str, str]
    timeline: ET.Element | None


def _merged_template(chain: list[ET.Element]) -> _Template | None:
    attributes: dict[str, str] = {}
    timeline: ET.Element | None = None
    found = False
    for element in chain:
        template = _child(element, "SegmentTemplate")
        if template is None:
            continue
        found = True
        attributes.update(template.attrib)
        inner = _child(template, "SegmentTimeline")
        timeline = inner if inner is not None else timeline
    return _Template(attributes, timeline) if found else None


def _timeline_starts(timeline: ET.Element) -> list[int]:
    """Start times (timescale units) of the segments a SegmentTimeline lists."""
    starts: list[int] = []
    now = 0
    for s in _children(timeline, "S"):
        now = int(s.get("t", now))
        duration = int(s.get("d", "0"))
        repeat = int(s.get("r", "0"))
        for _ in range(max(repeat, 0) + 1):
            starts.append(now)
            now += duration
    return starts


def _template_names(
    template: _Template, representation: ET.Element, total_s: float | None
) -> tuple[str | None, list[str] | None, int | None]:
    """(initialization name, media names or None for "count unknown", listed count)."""
    attributes = template.attributes
    init = attributes.get("initialization")
    init_name = _expand(init, representation, 0, 0) if init else None
    media = attributes.get("media")
    if not media:
        return init_name, [], 0
    start = int(attributes.get("startNumber", "1"))
    if template.timeline is not None:
        starts = _timeline_starts(template.timeline)
        names = [_expand(media, representation, start + k, t) for k, t in enumerate(starts)]
        return init_name, names, len(names)
    duration = float(attributes.get("duration", "0"))
    timescale = float(attributes.get("timescale", "1"))
    if duration > 0 and total_s is not None:
        count = max(1, math.ceil(total_s / (duration / timescale) - 1e-6))
        names = [_expand(media, representation, start + k, 0) for k in range(count)]
        return init_name, names, count
    return init_name, None, None  # count unknown: every consecutive number found


def read_dash(manifest: str | Path) -> StreamParts:
    """The local files of the best video representation of DASH manifest ``manifest``.

    Raises :class:`ConfigError` for a manifest that is not DASH XML, lists no video or
    addresses its segments remotely, and :class:`InputFileError` when no representation has
    its first files beside the manifest (the message names the file looked for).
    """
    path = Path(manifest)
    try:
        root = ET.parse(path).getroot()
    except (ET.ParseError, OSError) as exc:
        msg = f"DASH manifest {path} cannot be read ({exc}); re-download it"
        raise ConfigError(msg) from None
    if _local(root.tag) != "MPD":
        msg = f"{path} is not a DASH manifest (its root element is <{_local(root.tag)}>, not <MPD>)"
        raise ConfigError(msg)
    if root.get("type", "static") == "dynamic":
        msg = (
            f'DASH manifest {path} is a live stream (type="dynamic"); record or download the '
            "stream to one file first and ingest that"
        )
        raise ConfigError(msg)
    total_s = _seconds(root.get("mediaPresentationDuration"))
    candidates: list[tuple[int, list[ET.Element]]] = []
    for period in _children(root, "Period")[:1]:  # a saved walk is one period
        period_s = _seconds(period.get("duration"))
        if period_s is not None:
            total_s = period_s
        for adaptation in _children(period, "AdaptationSet"):
            for representation in _children(adaptation, "Representation"):
                if _is_video(adaptation, representation):
                    bandwidth = int(representation.get("bandwidth", "0") or 0)
                    candidates.append((bandwidth, [root, period, adaptation, representation]))
    if not candidates:
        msg = f"DASH manifest {path} lists no video representation; it is not a video download"
        raise ConfigError(msg)
    candidates.sort(key=lambda c: -c[0])
    looked_for: list[str] = []
    for _, chain in candidates:
        parts = _local_parts(path, chain, total_s, looked_for)
        if parts is not None:
            return parts
    msg = (
        f"DASH manifest {path}: its video segments are not beside it (looked for "
        f"{', '.join(dict.fromkeys(looked_for))}); download the segments into {path.parent} "
        "or join them into one MP4 and ingest that"
    )
    raise InputFileError(msg)


def _local_parts(
    manifest: Path, chain: list[ET.Element], total_s: float | None, looked_for: list[str]
) -> StreamParts | None:
    """The representation at the end of ``chain`` as local files, or None when its first
    file is not there (its name is added to ``looked_for``)."""
    representation = chain[-1]
    rep_id = representation.get("id", "?")
    base = _base_path(chain)
    folder = manifest.parent

    def local(address: str) -> Path:
        name = local_name(address)
        return folder / (name if "://" in address else base + name)

    template = _merged_template(chain)
    segment_list = next(
        (s for e in reversed(chain) if (s := _child(e, "SegmentList")) is not None), None
    )
    init_name: str | None
    names: list[str] | None
    listed: int | None
    if template is not None:
        init_name, names, listed = _template_names(template, representation, total_s)
    elif segment_list is not None:
        init = _child(segment_list, "Initialization")
        init_name = init.get("sourceURL") if init is not None else None
        names = [s.get("media", "") for s in _children(segment_list, "SegmentURL")]
        listed = len(names)
    else:  # SegmentBase or nothing: the BaseURL is the whole representation in one file
        whole = folder / base if base and not base.endswith("/") else None
        if whole is None or not whole.is_file():
            looked_for.append(whole.name if whole is not None else f"the file of {rep_id!r}")
            return None
        return StreamParts(manifest, rep_id, None, (whole,), 1)
    initialization = local(init_name) if init_name else None
    if initialization is not None and not initialization.is_file():
        looked_for.append(initialization.name)
        return None
    segments: list[Path] = []
    missing: str | None = None
    if names is None:  # count unknown: consecutive numbers from startNumber
        assert template is not None  # only a template leaves the count open
        number = int(template.attributes.get("startNumber", "1"))
        media = template.attributes["media"]
        while (found := local(_expand(media, representation, number, 0))).is_file():
            segments.append(found)
            number += 1
    else:
        for name in names:
            if not (found := local(name)).is_file():
                missing = found.name
                break
            segments.append(found)
    if not segments:
        looked_for.append(missing or f"the first media segment of {rep_id!r}")
        return None
    return StreamParts(manifest, rep_id, initialization, tuple(segments), listed, missing)
