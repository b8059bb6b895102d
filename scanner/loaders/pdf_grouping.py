"""pdfminer's hierarchical grouping of a page's text boxes (`LTLayoutContainer.group_textboxes`), with the
same result in a fraction of the time on pages with many boxes.

pdfminer puts every pair of boxes in one heap keyed (deferred, distance, id(a), id(b)), pops the closest pair,
merges it into a group unless another box lies between them (then the pair goes back, deferred), and pushes
the group's distance to every box still on the plane. A page of n boxes (a table: 400 cells) makes about n²
heap entries, nearly all of them stale by the time they are popped, and computes every distance in Python:
three quarters of the load of a table PDF.

Here each box or group owns the pairs it opened (a box the pairs with the boxes after it, a group the pairs
with what was on the plane when it was made), computed at once with numpy and sorted by (distance, other);
one heap holds only the closest live pair of each owner and the deferred pairs. A pair whose other side has
been merged is skipped inside its owner's list, without a heap operation. Keys are those of pdfminer with
`id()` replaced by creation order (boxes in list order, then groups as they are made), which is the tie-break
the loader uses anyway (scanner/loaders/pdf.py), and every key is unique, so the pairs are merged in exactly
pdfminer's order: the same groups, in the same plane order. Distances are computed with the same operations
in the same order (IEEE double arithmetic, no rounding difference). Pages with few boxes, and boxes with
coordinates beyond ±1e150 or not numbers (where an infinite distance or NaN would make argument order matter), take pdfminer's own code.
"""

from __future__ import annotations

import heapq
from typing import Any, Callable, Sequence

import numpy as np
from pdfminer.layout import LTTextBoxVertical, LTTextGroupLRTB, LTTextGroupTBRL
from pdfminer.utils import Plane

# Below this many boxes pdfminer's own loop is as fast (numpy's per-call cost dominates).
FAST_FROM = 24
# Coordinates within ±1e150 keep every width, area and distance finite (no inf, no NaN from inf - inf), where
# the order of min/max arguments and of comparisons cannot matter.
_BOUND = 1e150


def group_textboxes(page: Any, laparams: Any, boxes: Sequence[Any], reference: Callable) -> list:
    """The groups pdfminer's group_textboxes (with creation-order ties, `reference`) returns for `boxes`."""
    n = len(boxes)
    if n < FAST_FROM:
        return reference(page, laparams, boxes)
    coords = [(b.x0, b.y0, b.x1, b.y1, b.width * b.height) for b in boxes]
    if not all(abs(v) <= _BOUND for c in coords for v in c[:4]):
        return reference(page, laparams, boxes)
    return _Grouping(page.bbox, boxes, coords).run()


class _Grouping:
    def __init__(self, bbox: Any, boxes: Sequence[Any], coords: list[tuple[float, ...]]) -> None:
        n = len(boxes)
        cap = 2 * n
        self.objs: list[Any] = list(boxes)
        # Coordinates and areas by creation number (boxes 0..n-1, then groups n, n+1, …).
        self.x0 = np.zeros(cap)
        self.y0 = np.zeros(cap)
        self.x1 = np.zeros(cap)
        self.y1 = np.zeros(cap)
        self.area = np.zeros(cap)
        table = np.array(coords, dtype=np.float64)
        self.x0[:n], self.y0[:n], self.x1[:n], self.y1[:n], self.area[:n] = table.T
        self.alive = np.zeros(cap, dtype=bool)
        self.alive[:n] = True
        self.dead = bytearray(cap)
        # Per owner: its pairs sorted by (distance, other), as (distances, others), and the index of its head.
        self.dists: list[Any] = [None] * cap
        self.others: list[Any] = [None] * cap
        self.head = [0] * cap
        self.heap: list[tuple[bool, float, int, int]] = []
        self.plane: Plane = Plane(bbox)
        self.plane.extend(boxes)
        for i in range(n - 1):
            self._own(i, np.arange(i + 1, n))

    def _own(self, owner: int, others: np.ndarray) -> None:
        """Compute and sort the pairs `owner` opens with `others` (ascending), and queue its closest one."""
        x0 = np.minimum(self.x0[owner], self.x0[others])
        y0 = np.minimum(self.y0[owner], self.y0[others])
        x1 = np.maximum(self.x1[owner], self.x1[others])
        y1 = np.maximum(self.y1[owner], self.y1[others])
        # pdfminer: (x1 - x0) * (y1 - y0) - obj1.width * obj1.height - obj2.width * obj2.height, obj1 the owner
        d = (x1 - x0) * (y1 - y0) - self.area[owner] - self.area[others]
        order = np.argsort(d, kind="stable")     # stable: equal distances stay in ascending `others` order
        self.dists[owner] = d[order]
        self.others[owner] = others[order].tolist()
        self.head[owner] = 0
        self._queue_head(owner)

    def _queue_head(self, owner: int) -> None:
        """Push the owner's closest pair whose other side is still on the plane (skipping merged ones)."""
        others, k, dead = self.others[owner], self.head[owner], self.dead
        while k < len(others) and dead[others[k]]:
            k += 1
        self.head[owner] = k
        if k < len(others):
            heapq.heappush(self.heap, (False, float(self.dists[owner][k]), owner, others[k]))
        else:
            self.dists[owner] = self.others[owner] = None

    def _between(self, a: int, b: int) -> bool:
        """pdfminer's isany: another object on the plane overlaps the bounding rectangle of a and b."""
        obj1, obj2 = self.objs[a], self.objs[b]
        rect = (min(obj1.x0, obj2.x0), min(obj1.y0, obj2.y0), max(obj1.x1, obj2.x1), max(obj1.y1, obj2.y1))
        return bool(set(self.plane.find(rect)).difference((obj1, obj2)))

    def run(self) -> list:
        heap, dead = self.heap, self.dead
        while heap:
            deferred, d, a, b = heapq.heappop(heap)
            if dead[a]:
                continue                      # the owner was merged: its whole list is stale
            if dead[b]:
                if not deferred:
                    self._queue_head(a)       # skip this pair (and any other merged ones) in a's list
                continue
            if not deferred:
                self.head[a] += 1
                if self._between(a, b):
                    heapq.heappush(heap, (True, d, a, b))
                    self._queue_head(a)
                    continue
            self._merge(a, b)
        return list(self.plane)

    def _merge(self, a: int, b: int) -> None:
        obj1, obj2 = self.objs[a], self.objs[b]
        vertical = (LTTextBoxVertical, LTTextGroupTBRL)
        if isinstance(obj1, vertical) or isinstance(obj2, vertical):
            group: Any = LTTextGroupTBRL([obj1, obj2])
        else:
            group = LTTextGroupLRTB([obj1, obj2])
        self.plane.remove(obj1)
        self.plane.remove(obj2)
        self.dead[a] = self.dead[b] = 1
        self.alive[a] = self.alive[b] = False
        self.dists[a] = self.others[a] = self.dists[b] = self.others[b] = None
        g = len(self.objs)
        self.objs.append(group)
        self.x0[g], self.y0[g], self.x1[g], self.y1[g] = group.x0, group.y0, group.x1, group.y1
        self.area[g] = group.width * group.height
        others = np.flatnonzero(self.alive[:g])
        if len(others):
            self._own(g, others)
        self.alive[g] = True
        self.plane.add(group)
