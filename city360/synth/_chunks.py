"""Spatial chunks of a static triangle list, and which of them a camera can see.

llvmpipe transforms every vertex of every draw, so drawing the whole city into each of six
cube faces costs six times the city. Triangles are therefore sorted into 40 m grid chunks
(within an ordering group: the ground's paint layers must keep their order), each with a
bounding box; per view only the chunks inside the view frustum and the material's draw
distance are drawn, with one indirect multi-draw call.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

__all__ = ["RECORD_BYTES", "Chunks", "frustum_planes", "make_chunks"]

CHUNK_M = 40.0
RECORD_BYTES = 20


@dataclass(frozen=True, eq=False)
class Chunks:
    """``rows`` re-ordered so each chunk is contiguous: chunk i is vertices
    ``first[i] : first[i] + count[i]`` with bounds ``lower[i]``..``upper[i]`` (x, y, z)."""

    rows: npt.NDArray[np.float32]
    first: npt.NDArray[np.uint32]
    count: npt.NDArray[np.uint32]
    lower: npt.NDArray[np.float64]
    upper: npt.NDArray[np.float64]

    def __len__(self) -> int:
        return len(self.first)

    def visible(
        self, planes: npt.NDArray[np.float64], eye: npt.NDArray[np.float64], reach_m: float
    ) -> npt.NDArray[np.bool_]:
        """Chunks whose box is inside all ``planes`` and within ``reach_m`` of ``eye``."""
        # the box corner furthest along each plane normal decides (the "p-vertex" test)
        normals, offsets = planes[:, :3], planes[:, 3]
        corner = np.where(normals[:, None, :] >= 0, self.upper[None], self.lower[None])
        inside = np.all(np.einsum("pk,pck->pc", normals, corner) + offsets[:, None] >= 0, axis=0)
        nearest = np.clip(eye, self.lower, self.upper)
        near = np.einsum("ck,ck->c", nearest - eye, nearest - eye) <= reach_m * reach_m
        return inside & near

    def commands(self, mask: npt.NDArray[np.bool_]) -> npt.NDArray[np.uint32]:
        """Indirect draw records (count, instances, first, base instance, padding): moderngl
        reads array draw commands with a 20-byte stride, like element draw commands."""
        chosen = np.flatnonzero(mask)
        out = np.zeros((len(chosen), RECORD_BYTES // 4), np.uint32)
        out[:, 0] = self.count[chosen]
        out[:, 1] = 1
        out[:, 2] = self.first[chosen]
        return out


def make_chunks(
    rows: npt.NDArray[np.float32], *, group: npt.NDArray[np.integer] | None = None
) -> Chunks:
    """Sort a triangle list (3 rows a triangle, x y z first) into chunks by (group, cell)."""
    triangles = len(rows) // 3
    if triangles == 0:
        empty = np.zeros(0, np.uint32)
        bounds = np.zeros((0, 3))
        return Chunks(rows=rows[:0], first=empty, count=empty, lower=bounds, upper=bounds)
    corners = rows[: 3 * triangles, :3].reshape(triangles, 3, 3).astype(np.float64)
    centre = corners.mean(axis=1)
    cell = np.floor(centre[:, :2] / CHUNK_M).astype(np.int64)
    groups = np.zeros(triangles, np.int64) if group is None else np.asarray(group, np.int64)
    order = np.lexsort((cell[:, 1], cell[:, 0], groups))
    keys = np.stack([groups[order], cell[order, 0], cell[order, 1]], axis=1)
    starts = np.flatnonzero(np.concatenate([[True], np.any(keys[1:] != keys[:-1], axis=1)]))
    ends = np.concatenate([starts[1:], [triangles]])
    sorted_corners = corners[order]
    lower = np.array(
        [sorted_corners[a:b].min(axis=(0, 1)) for a, b in zip(starts, ends, strict=True)]
    )
    upper = np.array(
        [sorted_corners[a:b].max(axis=(0, 1)) for a, b in zip(starts, ends, strict=True)]
    )
    vertex_order = (order[:, None] * 3 + np.arange(3)).reshape(-1)
    return Chunks(
        rows=np.ascontiguousarray(rows[vertex_order]),
        first=(starts * 3).astype(np.uint32),
        count=((ends - starts) * 3).astype(np.uint32),
        lower=lower.reshape(-1, 3),
        upper=upper.reshape(-1, 3),
    )


def frustum_planes(view_proj: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """The 6 planes (a, b, c, d; inside where a x + b y + c z + d >= 0) of a view-projection
    matrix (row-major, column vectors), after Gribb and Hartmann."""
    m = view_proj
    planes = np.stack(
        [m[3] + m[0], m[3] - m[0], m[3] + m[1], m[3] - m[1], m[3] + m[2], m[3] - m[2]]
    )
    return planes / np.linalg.norm(planes[:, :3], axis=1, keepdims=True)
