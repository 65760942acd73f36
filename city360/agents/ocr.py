"""Reading shop signs in a view with OCR (tesseract through pytesseract), one call per view:
the ``tesseract`` backend of :mod:`city360.agents.ocr_backends`.

Tesseract reads a page; a street view is not one. Its layout analysis on a whole view loses
most signs to the facade's window grid, and one global threshold cannot serve a dark board with
light letters next to a light board with dark ones. So the view is cut first:

1. **Find text-like boxes**: the morphological gradient of the grey view, thresholded (Otsu) and
   closed with a short horizontal kernel, joins the strokes of a line of letters into one blob;
   blobs of a plausible size and a wide aspect are the candidate boxes (a board, or a few
   boards side by side).
2. **Binarize each box on its own**: upscaled 3x (letters a few pixels tall at 4 px per degree
   become readable) and thresholded two ways (Otsu, and a local mean that keeps blurred
   light-on-dark strokes thin) in both polarities, dark-on-light and light-on-dark; the wrong
   ones read as nothing.
3. **One tesseract call**: the binarized crops are stacked into one montage page, read as a
   block of text (``--psm 6``), and each word goes back to the box whose rows it came from.

Measured in the simulator on the demo city filmed at 1536 px (the 25 shop signs of its
landmark-search tasks, 640x480 views at 90 degrees FOV looking square at the shop fronts from
the street 3 m before, at, 3 m and 6 m past each sign): 58 of 94 views read the name (Otsu
alone: 57, a local mean alone: 46; unsharp masking added nothing); from 512-px video none
reads. Otsu alone missed a white-on-red sign filmed at 1024 px that the local mean reads.
About 0.8 s a view on one core, most of it in tesseract.

Against PP-OCR (the ``rapidocr`` backend, :mod:`city360.agents.ocr_rapid`), measured with
``city360 bench-ocr demo`` (:mod:`city360.bench.ocr`: the same views, now 96 of the 25 signs'
100 positions on their segments; read = the sign reader's ``text_match`` >= 0.75):

=========  ==========  ===========  =====================
backend    read        false reads  CPU s / view (1 core)
=========  ==========  ===========  =====================
rapidocr   87 / 96     18           0.36 (0.40)
tesseract  56 / 96     11           0.29 (0.45)
=========  ==========  ===========  =====================

(Two runs on a machine loaded by other work; the second in brackets.) A false read is another
landmark's name matched in a view more than 15 m from its sign; most of both backends' are the
matcher's, not the OCR's: a sign's generic word ("Asianajotoimisto", law office) matches "HPP
Asianajotoimisto", a fragment "Gro" matches "Grano". PP-OCR reads every view tesseract reads
and 31 more (all four of Pastor, Odeco OY, Integware OY, HPP Asianajotoimisto and Humap among
them); 4 of its 9 misses are one long board (Valtakunnansovittelijan toimisto) it finds no
text on. It reads Japanese, kana and kanji alike, where tesseract's ``jpn`` splits the
characters with spaces ("さく ら 珈 琲" matches "さくら珈琲" at 0.67, under the threshold). Off
the 25 search-by-image reference pictures PP-OCR reads 25 names, tesseract 16. So
``rapidocr`` is the sign reader's default and this module stays as the backend that needs no
Python extra (tesseract is a system package).
"""

from __future__ import annotations

from dataclasses import dataclass
from types import ModuleType

import numpy as np
import numpy.typing as npt

from city360.errors import DependencyMissingError
from city360.types import Image

__all__ = ["SignText", "check_tesseract", "find_text_boxes", "read_signs", "read_text"]

Box = tuple[int, int, int, int]
"""``(x, y, width, height)`` in pixels of the view, x right and y down from the top-left."""

_UPSCALE = 3
_PAD_PX = 3
_ROW_MARGIN_PX = 15
_MIN_HEIGHT_PX = 6
_MIN_WIDTH_PX = 10
_MIN_ASPECT = 1.5


@dataclass(frozen=True, slots=True)
class SignText:
    """What OCR read in one box of a view: its words (both polarities) and where it is."""

    text: str
    box: Box

    @property
    def centre_x(self) -> float:
        """Horizontal centre of the box, pixels from the view's left edge."""
        return self.box[0] + self.box[2] / 2


def find_text_boxes(grey: npt.NDArray[np.uint8]) -> list[Box]:
    """Candidate boxes of lines of text in a grey view, left to right then top to bottom."""
    import cv2

    height, width = grey.shape
    gradient = cv2.morphologyEx(grey, cv2.MORPH_GRADIENT, np.ones((3, 3), np.uint8))
    _, edges = cv2.threshold(gradient, 0, 255, cv2.THRESH_BINARY | cv2.THRESH_OTSU)
    joined = cv2.morphologyEx(
        edges, cv2.MORPH_CLOSE, cv2.getStructuringElement(cv2.MORPH_RECT, (9, 3))
    )
    count, _, stats, _ = cv2.connectedComponentsWithStats(joined)
    boxes: list[Box] = []
    for index in range(1, count):
        x, y, w, h = (int(v) for v in stats[index, :4])
        if h < _MIN_HEIGHT_PX or w < _MIN_WIDTH_PX or h > height / 3 or w > width * 0.6:
            continue
        if w / h < _MIN_ASPECT:
            continue
        boxes.append((x, y, w, h))
    return sorted(boxes, key=lambda b: (b[1], b[0]))


def _binarized_crops(grey: npt.NDArray[np.uint8], box: Box) -> list[npt.NDArray[np.uint8]]:
    """The box upscaled and thresholded two ways, each in both polarities (letters black on
    white in one of them): Otsu's global threshold, and a local mean over a block about the
    box's height, which keeps the strokes of blurred light-on-dark letters thin where Otsu
    fattens them into blobs."""
    import cv2

    x, y, w, h = box
    cut = grey[max(0, y - _PAD_PX) : y + h + _PAD_PX, max(0, x - _PAD_PX) : x + w + _PAD_PX]
    crop = np.asarray(
        cv2.resize(cut, None, fx=_UPSCALE, fy=_UPSCALE, interpolation=cv2.INTER_CUBIC), np.uint8
    )
    block = max(3, (int(crop.shape[0] * 0.8) // 2) * 2 + 1)
    crops = []
    for source in (crop, 255 - crop):
        _, otsu = cv2.threshold(source, 0, 255, cv2.THRESH_BINARY | cv2.THRESH_OTSU)
        local = cv2.adaptiveThreshold(
            source, 255, cv2.ADAPTIVE_THRESH_MEAN_C, cv2.THRESH_BINARY, block, 10
        )
        crops += [np.asarray(otsu, np.uint8), np.asarray(local, np.uint8)]
    return crops


def _montage(
    crops: list[npt.NDArray[np.uint8]],
) -> tuple[npt.NDArray[np.uint8], list[tuple[int, int]]]:
    """Crops stacked on a white page, and each crop's row span (top, bottom) in it."""
    width = max(c.shape[1] for c in crops) + 2 * _ROW_MARGIN_PX
    rows, spans, top = [], [], 0
    for crop in crops:
        row = np.full((crop.shape[0] + 2 * _ROW_MARGIN_PX, width), 255, np.uint8)
        row[_ROW_MARGIN_PX : _ROW_MARGIN_PX + crop.shape[0], _ROW_MARGIN_PX:][
            :, : crop.shape[1]
        ] = crop
        rows.append(row)
        spans.append((top, top + row.shape[0]))
        top += row.shape[0]
    return np.vstack(rows), spans


def _tesseract() -> ModuleType:
    try:
        import pytesseract
    except ImportError as exc:  # pragma: no cover - a core dependency
        msg = "pytesseract is needed to read signs: pip install pytesseract"
        raise DependencyMissingError(msg) from exc
    return pytesseract


def check_tesseract() -> None:
    """Raise :class:`~city360.errors.DependencyMissingError` unless pytesseract imports and
    the tesseract program runs."""
    pytesseract = _tesseract()
    try:
        pytesseract.get_tesseract_version()
    except pytesseract.TesseractNotFoundError as exc:
        raise DependencyMissingError(_NO_TESSERACT) from exc


_NO_TESSERACT = "tesseract is not installed: apt-get install tesseract-ocr (Debian/Ubuntu)"


def read_signs(image: Image, *, lang: str = "eng") -> list[SignText]:
    """Every box of text OCR reads in an RGB view (see the module docstring); boxes where
    nothing is read are left out."""
    import cv2

    pytesseract = _tesseract()
    grey = np.asarray(cv2.cvtColor(np.asarray(image), cv2.COLOR_RGB2GRAY), np.uint8)
    boxes = find_text_boxes(grey)
    if not boxes:
        return []
    crops, owners = [], []
    for index, box in enumerate(boxes):
        for crop in _binarized_crops(grey, box):
            crops.append(crop)
            owners.append(index)
    page, spans = _montage(crops)
    try:
        data = pytesseract.image_to_data(
            page, lang=lang, config="--psm 6", output_type=pytesseract.Output.DICT
        )
    except pytesseract.TesseractNotFoundError as exc:
        raise DependencyMissingError(_NO_TESSERACT) from exc
    words: list[list[str]] = [[] for _ in boxes]
    for text, top, height in zip(data["text"], data["top"], data["height"], strict=True):
        word = str(text).strip()
        if not word:
            continue
        middle = int(top) + int(height) / 2
        for owner, (start, stop) in zip(owners, spans, strict=True):
            if start <= middle < stop:
                words[owner].append(word)
                break
    return [
        SignText(" ".join(found), box) for box, found in zip(boxes, words, strict=True) if found
    ]


def read_text(image: Image, *, lang: str = "eng") -> str:
    """All the sign text OCR reads in an RGB view, one box per line; "" when nothing is read."""
    return "\n".join(sign.text for sign in read_signs(image, lang=lang))
