"""NMEA 0183 logs (``.nmea``, or a ``.txt``/``.log`` holding ``$`` sentences): GGA, RMC, GSA,
ZDA sentences.

A sentence is read wherever it stands in its line: loggers put things before and after it
(Android's GnssLogger and GPSTest write ``NMEA,$GPGGA,...*hh,1714557600000`` among their
``Raw`` and ``Fix`` rows; others a time stamp and a space or ``;``), and a serial capture of
a u-blox receiver mixes binary UBX messages into the text.

A receiver speaks once per epoch (one fix time) in several sentences, any talker (GP, GN, GL,
GA, BD): RMC gives the date, time, position and status (A valid, V void); GGA the time,
position, altitude, fix quality (0 invalid, 1 GPS, 2 DGPS, 3 PPS, 4/5 RTK, 6 estimated),
satellites used and HDOP; GSA (no time of its own: it belongs to the epoch being told) the fix
mode (1 none, 2 2-D, 3 3-D) and PDOP, HDOP, VDOP; ZDA the date and time. Sentences are
grouped by their time field into one fix each; position from GGA, else RMC. A fix is without
a position when GGA says quality 0, RMC says V or GSA says 1.

Time: GGA and GSA carry no date, so every epoch takes the date of the RMC or ZDA sentences
around it (epochs before the first are dated back from it), a day later each time the time of
day runs back by more than 12 h (midnight); a log over 24 h stays in order because an epoch is
a run of one time stamp. A smaller step back without a date is an error naming the line. A log
with no date at all (GGA only, as many cheap loggers write) takes its date from the video it
is ingested with: the UTC day that puts its first fix nearest the video's creation time
(``creation_time_utc``); without one it is rejected with a message saying so.

Bad input: a serial log is a noisy stream (a sentence cut when the logger started, a byte
lost), and NMEA's own answer is the checksum; so a sentence with a wrong checksum, or one too
short to hold its fields, is skipped and counted in one logged warning per file. A sentence
whose checksum is right but whose field is not a number, or is negative where it cannot be
(HDOP, satellites), is an error naming the file, line and field: the receiver said it.
Hand-written because it is three fixed sentence layouts, and ``pynmea2``, the one maintained
parser, is not among the project's dependencies.
"""

from __future__ import annotations

import logging
import math
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import reduce
from pathlib import Path

from city360.errors import GpsError
from city360.video_store.gps.quality import FIX_NAMES, FIX_UNKNOWN, FixQuality
from city360.video_store.gps.track import GpsTrack

__all__ = ["is_nmea_text", "read_nmea"]

log = logging.getLogger(__name__)

_GGA_FIX = ("none", "gps", "dgps", "pps", "rtk", "rtk", "estimated")
"""Fix names of GGA quality 0-6 (5, float RTK, counted as RTK); 7 manual, 8 simulated are
not positions and read as none."""
_MIN_FIELDS = {"GGA": 10, "RMC": 10, "GSA": 18, "ZDA": 5}


_SENTENCE = re.compile(r"\$[A-Z]{2}(GGA|RMC|GSA|GSV|VTG|GLL|ZDA|TXT),")
_IN_LINE = re.compile(r"\$[A-Z]{2}[A-Z]{3},[^$*\r\n]*(?:\*[0-9A-Fa-f]{0,2})?")
"""A sentence within a line: ``$``, talker and type, fields up to the checksum (``$`` is
reserved in NMEA, so a second one starts another sentence); a cut checksum is kept so that it
fails, as a whole line did."""


def is_nmea_text(text: str, *, after_prefix: bool = True) -> bool:
    """True when a line of ``text`` (the head of a file) holds an NMEA sentence: at its start
    or, with ``after_prefix``, after a logger's prefix (the module docstring). Without it only
    the first five non-empty lines are looked at, and only at their start (the very first is
    often cut short: the logger started mid-sentence), as for every file before sentences
    behind a prefix were read."""
    if after_prefix:
        return any(_SENTENCE.search(line) for line in text.splitlines())
    lines = [line.strip() for line in text.splitlines() if line.strip()][:5]
    return any(_SENTENCE.match(line) for line in lines)


@dataclass(slots=True)
class _Epoch:
    """What the sentences of one fix time said (NaN / None: not said)."""

    time_of_day_s: float
    line_no: int
    day_s: float | None = None
    """POSIX seconds of the UTC midnight starting the date RMC or ZDA gave (None: not said)."""
    lat: float = math.nan
    lon: float = math.nan
    rmc_lat: float = math.nan
    rmc_lon: float = math.nan
    alt_m: float = math.nan
    gga_quality: int | None = None
    rmc_valid: bool | None = None
    gsa_mode: int | None = None
    satellites: float = math.nan
    hdop: float = math.nan
    vdop: float = math.nan
    pdop: float = math.nan


def _checksum_ok(sentence: str) -> bool:
    body, star, given = sentence[1:].partition("*")
    if not star:
        return True  # the checksum is optional in NMEA 0183
    try:
        return reduce(lambda acc, ch: acc ^ ord(ch), body, 0) == int(given[:2], 16)
    except ValueError:
        return False


def _degrees(value: str, hemisphere: str) -> float:
    """Decimal degrees of an NMEA ``(d)ddmm.mmmm`` field and its N/S/E/W letter."""
    if not value:
        return math.nan
    whole, minutes = divmod(float(value), 100.0)
    decimal = whole + minutes / 60.0
    return -decimal if hemisphere.upper() in ("S", "W") else decimal


def _time_of_day(value: str) -> float:
    return int(value[0:2]) * 3600 + int(value[2:4]) * 60 + float(value[4:])


class _Reader:
    """One pass over a log's lines, building epochs in order."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.epochs: list[_Epoch] = []
        self.current: _Epoch | None = None
        self.current_stamp = ""
        self.skipped = 0

    def _epoch(self, stamp: str, line_no: int) -> _Epoch | None:
        # A fix's sentences come together; the same time of day later in the log is another
        # day (a log over 24 h), so an epoch is a run of one stamp, never a lookup by stamp.
        if not stamp:
            return None
        if self.current is None or stamp != self.current_stamp:
            self.current = _Epoch(_time_of_day(stamp), line_no)
            self.current_stamp = stamp
            self.epochs.append(self.current)
        return self.current

    def _number(self, value: str, *, line_no: int, field: str, minimum: float | None) -> float:
        if not value:
            return math.nan
        try:
            number = float(value)
        except ValueError:
            msg = f"NMEA {self.path} line {line_no}: field `{field}` is {value!r}, not a number"
            raise GpsError(msg) from None
        if minimum is not None and number < minimum:
            msg = f"NMEA {self.path} line {line_no}: field `{field}` is {number}; must be >= 0"
            raise GpsError(msg)
        return number

    def line(self, raw: str, line_no: int) -> None:
        for match in _IN_LINE.finditer(raw):
            self._sentence(match.group(0).strip(), line_no)

    def _sentence(self, sentence: str, line_no: int) -> None:
        if not _checksum_ok(sentence):
            self.skipped += 1
            return
        fields = sentence[1:].partition("*")[0].split(",")
        kind = fields[0][-3:]
        if kind not in _MIN_FIELDS:
            return
        if len(fields) < _MIN_FIELDS[kind]:
            self.skipped += 1
            return
        try:
            getattr(self, f"_{kind.lower()}")(fields, line_no)
        except GpsError:  # a ValueError too, but the receiver's own word: not to be skipped
            raise
        except (ValueError, IndexError):
            self.skipped += 1  # a mangled time or coordinate field: a cut sentence

    def _gga(self, f: list[str], line_no: int) -> None:
        epoch = self._epoch(f[1], line_no)
        if epoch is None:
            return
        epoch.lat, epoch.lon = _degrees(f[2], f[3]), _degrees(f[4], f[5])
        quality = self._number(f[6], line_no=line_no, field="GGA fix quality", minimum=0)
        epoch.gga_quality = None if math.isnan(quality) else int(quality)
        epoch.satellites = self._number(f[7], line_no=line_no, field="GGA satellites", minimum=0)
        epoch.hdop = self._number(f[8], line_no=line_no, field="GGA HDOP", minimum=0)
        epoch.alt_m = self._number(f[9], line_no=line_no, field="GGA altitude", minimum=None)

    def _rmc(self, f: list[str], line_no: int) -> None:
        epoch = self._epoch(f[1], line_no)
        if epoch is None:
            return
        epoch.rmc_valid = f[2].upper() == "A"
        epoch.rmc_lat, epoch.rmc_lon = _degrees(f[3], f[4]), _degrees(f[5], f[6])
        if f[9]:  # a mangled date is a cut sentence (ValueError)
            epoch.day_s = datetime.strptime(f[9], "%d%m%y").replace(tzinfo=UTC).timestamp()

    def _zda(self, f: list[str], line_no: int) -> None:
        epoch = self._epoch(f[1], line_no)
        if epoch is None or not (f[2] and f[3] and f[4]):
            return
        day = datetime(int(f[4]), int(f[3]), int(f[2]), tzinfo=UTC)  # a mangled one: cut
        epoch.day_s = day.timestamp()

    def _gsa(self, f: list[str], line_no: int) -> None:
        epoch = self.current
        if epoch is None:
            return
        mode = self._number(f[2], line_no=line_no, field="GSA fix mode", minimum=0)
        if not math.isnan(mode):
            epoch.gsa_mode = int(mode)
        for index, name in ((15, "pdop"), (16, "hdop"), (17, "vdop")):
            value = self._number(f[index], line_no=line_no, field=f"GSA {name.upper()}", minimum=0)
            if not math.isnan(value):
                setattr(epoch, name, value)


def _fix_type(epoch: _Epoch) -> int:
    if epoch.gga_quality is not None and (epoch.gga_quality == 0 or epoch.gga_quality > 6):
        return FIX_NAMES["none"]
    if epoch.rmc_valid is False or epoch.gsa_mode == 1:
        return FIX_NAMES["none"]
    if epoch.gga_quality is not None and epoch.gga_quality >= 2:
        return FIX_NAMES[_GGA_FIX[epoch.gga_quality]]
    if epoch.gsa_mode in (2, 3):
        return FIX_NAMES[f"{epoch.gsa_mode}d"]
    return FIX_NAMES["gps"] if epoch.gga_quality == 1 else FIX_UNKNOWN


_DAY_S = 86_400.0


def _date_from_video(path: Path, first: _Epoch, creation_time_utc: float | None) -> float:
    """POSIX seconds of the UTC midnight that puts ``first`` (the log's first epoch) nearest
    the video's creation time: the day before, of or after that time."""
    if creation_time_utc is None:
        msg = (
            f"NMEA {path} has no date (no RMC or ZDA sentence: GGA carries the time of day "
            "only) and no video creation time to date it; log RMC or ZDA too, or ingest the log "
            "with a video that records its creation time"
        )
        raise GpsError(msg)
    midnight = (creation_time_utc // _DAY_S) * _DAY_S
    days = (midnight - _DAY_S, midnight, midnight + _DAY_S)
    day = min(days, key=lambda d: abs(d + first.time_of_day_s - creation_time_utc))
    log.info(
        "NMEA %s has no RMC or ZDA date: dated %s UTC from the video's creation time",
        path,
        datetime.fromtimestamp(day, UTC).date().isoformat(),
    )
    return day


def _posix_times(
    path: Path, epochs: list[_Epoch], creation_time_utc: float | None = None
) -> list[float]:
    """POSIX seconds of each epoch: RMC or ZDA dates where given, else one day on per midnight.

    A time of day that runs backwards by more than 12 h with no date is taken as midnight
    passed; a smaller step back, or a date and time before the epoch ahead of it, leaves the
    order of time undecided and is an error naming the line. A log with no date at all is
    dated by ``creation_time_utc`` (:func:`_date_from_video`).
    """
    first_dated = next((i for i, e in enumerate(epochs) if e.day_s is not None), None)
    if first_dated is None:
        epochs[0].day_s = _date_from_video(path, epochs[0], creation_time_utc)
        first_dated = 0
    days = [0.0] * len(epochs)
    day = 0.0
    previous: _Epoch | None = None
    for i, epoch in enumerate(epochs):
        if epoch.day_s is not None:
            day = epoch.day_s
            if i == first_dated and previous is not None:
                wrapped = previous.time_of_day_s - epoch.time_of_day_s > _DAY_S / 2
                shift = day - (days[i - 1] + (_DAY_S if wrapped else 0.0))
                days[:i] = [d + shift for d in days[:i]]
        elif previous is not None and epoch.time_of_day_s < previous.time_of_day_s:
            if previous.time_of_day_s - epoch.time_of_day_s <= _DAY_S / 2:
                msg = (
                    f"NMEA {path} line {epoch.line_no}: time of day "
                    f"{epoch.time_of_day_s:.2f} s runs back from {previous.time_of_day_s:.2f} s "
                    f"(line {previous.line_no}) with no RMC or ZDA date to say a day passed; "
                    "the order of time cannot be decided"
                )
                raise GpsError(msg)
            day += _DAY_S  # past midnight with no RMC to say so
        ahead = previous is not None and (
            day + epoch.time_of_day_s <= days[i - 1] + previous.time_of_day_s
        )
        if epoch.day_s is not None and previous is not None and ahead:
            date = datetime.fromtimestamp(epoch.day_s, UTC).date().isoformat()
            msg = (
                f"NMEA {path} line {epoch.line_no}: date {date} and time "
                f"{epoch.time_of_day_s:.2f} s are not after line {previous.line_no}; "
                "the order of time cannot be decided"
            )
            raise GpsError(msg)
        days[i] = day
        previous = epoch
    return [d + e.time_of_day_s for d, e in zip(days, epochs, strict=True)]


def read_nmea(path: Path, *, creation_time_utc: float | None = None) -> GpsTrack:
    """Read an NMEA log into a track with fix type, satellites and DOPs (module docstring).
    ``creation_time_utc`` (POSIX seconds, the video's) dates a log without RMC or ZDA."""
    try:
        text = path.read_text(encoding="ascii", errors="replace")
    except OSError as exc:
        msg = f"NMEA {path} cannot be read ({exc})"
        raise GpsError(msg) from None
    reader = _Reader(path)
    for line_no, raw in enumerate(text.splitlines(), start=1):
        reader.line(raw, line_no)
    if reader.skipped:
        log.warning(
            "NMEA %s: skipped %d sentences with a bad checksum or cut short", path, reader.skipped
        )
    epochs = reader.epochs
    if not epochs:
        msg = f"NMEA {path} has no GGA or RMC sentence; is it really an NMEA log?"
        raise GpsError(msg)
    t = _posix_times(path, epochs, creation_time_utc)
    lat = [e.lat if math.isfinite(e.lat) else e.rmc_lat for e in epochs]
    lon = [e.lon if math.isfinite(e.lon) else e.rmc_lon for e in epochs]
    quality = FixQuality.from_columns(
        hdop=[e.hdop for e in epochs],
        vdop=[e.vdop for e in epochs],
        pdop=[e.pdop for e in epochs],
        satellites=[e.satellites for e in epochs],
        fix_type=[_fix_type(e) for e in epochs],
    )
    alt = [e.alt_m for e in epochs]
    return GpsTrack.from_columns(path, "nmea", t, lat, lon, alt, quality=quality)
