"""scanner/loaders/pdf_grouping.py groups text boxes exactly as pdfminer's group_textboxes does with ties broken
by creation order: the same tree of groups, in the same order, on random layouts full of ties and overlaps, and
the same page text as pdfminer's own extract_text on a generated table page."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pdfminer.layout import LAParams, LTTextBoxHorizontal, LTTextBoxVertical, LTTextGroup

from scanner.loaders import pdf_grouping
from scanner.loaders.pdf import _Page, _reference_group_textboxes, load_pdf
from test_pdf_loader import creation_order_ties, make_pdf, pdfminer_page_texts, text_at

PAGE_BBOX = (0.0, 0.0, 600.0, 800.0)


def make_boxes(specs):
    boxes = []
    for x, y, w, h, vertical in specs:
        box = LTTextBoxVertical() if vertical else LTTextBoxHorizontal()
        box.set_bbox((x, y, x + w, y + h))
        boxes.append(box)
    return boxes


def tree(obj, index):
    """The grouping as nested tuples: a box is its position in the input, a group its kind, bbox and children."""
    if isinstance(obj, LTTextGroup):
        return (type(obj).__name__, obj.bbox, tuple(tree(child, index) for child in obj))
    return index[id(obj)]


def both_ways(specs):
    """(pdfminer's grouping, ours) of the same layout, each on its own fresh boxes."""
    ref_boxes, fast_boxes = make_boxes(specs), make_boxes(specs)
    laparams = LAParams()
    ref = _reference_group_textboxes(_Page(1, PAGE_BBOX), laparams, ref_boxes)
    fast = pdf_grouping._Grouping(PAGE_BBOX, fast_boxes,
                                  [(b.x0, b.y0, b.x1, b.y1, b.width * b.height) for b in fast_boxes]).run()
    ref_index = {id(b): i for i, b in enumerate(ref_boxes)}
    fast_index = {id(b): i for i, b in enumerate(fast_boxes)}
    return [tree(g, ref_index) for g in ref], [tree(g, fast_index) for g in fast]


# Coordinates on a coarse grid (many equal distances: the tie-break decides), sizes that overlap, a few
# vertical boxes (TBRL groups), and boxes partly off the page.
coordinate = st.integers(-2, 24).map(lambda v: v * 25.0)
size = st.sampled_from([0.0, 10.0, 25.0, 50.0, 12.5, 75.0])
box_spec = st.tuples(coordinate, coordinate, size, size, st.sampled_from([False, False, False, True]))


@settings(max_examples=300, deadline=None)
@given(st.lists(box_spec, min_size=2, max_size=40))
def test_same_groups_as_pdfminer_on_random_layouts(specs):
    ref, fast = both_ways(specs)
    assert fast == ref


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.floats(-1000, 1000), st.floats(-1000, 1000), st.floats(0, 300), st.floats(0, 300),
                          st.booleans()), min_size=2, max_size=30))
def test_same_groups_as_pdfminer_with_any_coordinates(specs):
    ref, fast = both_ways(specs)
    assert fast == ref


def test_a_table_of_equal_cells_groups_as_pdfminer_does():
    # 12 × 10 identical cells: every distance between neighbours ties, so only the tie-break orders the merges.
    specs = [(40.0 * col, 20.0 * row, 30.0, 10.0, False) for row in range(12) for col in range(10)]
    ref, fast = both_ways(specs)
    assert fast == ref and len(fast) == 1


def test_few_boxes_or_unbounded_coordinates_take_pdfminer_s_own_code(monkeypatch):
    calls = []

    def reference(page, laparams, boxes):
        calls.append(len(boxes))
        return _reference_group_textboxes(page, laparams, boxes)

    page = _Page(1, PAGE_BBOX)
    few = make_boxes([(10.0 * i, 0.0, 5.0, 5.0, False) for i in range(pdf_grouping.FAST_FROM - 1)])
    pdf_grouping.group_textboxes(page, LAParams(), few, reference)
    many = make_boxes([(10.0 * i, 0.0, 5.0, 5.0, False) for i in range(pdf_grouping.FAST_FROM)])
    pdf_grouping.group_textboxes(page, LAParams(), many, reference)
    assert calls == [pdf_grouping.FAST_FROM - 1]
    huge = make_boxes([(10.0 * i, 0.0, 5.0, 5.0, False) for i in range(pdf_grouping.FAST_FROM)])
    huge[3].set_bbox((0.0, 0.0, math.inf, 5.0))
    pdf_grouping.group_textboxes(page, LAParams(), huge, reference)
    assert calls == [pdf_grouping.FAST_FROM - 1, pdf_grouping.FAST_FROM]


@pytest.mark.parametrize("columns, rows", [(6, 8), (9, 30)])
def test_a_generated_table_page_has_pdfminer_s_text(columns, rows, monkeypatch):
    """A page of many equal cells goes through the fast grouping and gives extract_text's text (ties broken by
    creation order, as the loader always breaks them)."""
    sizes = []
    original = pdf_grouping._Grouping.__init__

    def spy(self, bbox, boxes, coords):
        sizes.append(len(boxes))
        original(self, bbox, boxes, coords)

    monkeypatch.setattr(pdf_grouping._Grouping, "__init__", spy)
    cells = b"".join(text_at(20 + 60 * c, 760 - 24 * r, f"c{r}x{c}", size=9)
                     for r in range(rows) for c in range(columns))
    data = make_pdf([cells], mediabox=(0, 0, 600, 800))
    text = load_pdf(data, "table.pdf").pages[0].text
    with creation_order_ties():
        assert text == pdfminer_page_texts(data, 1)[0]
    assert text.count("c") == columns * rows
    assert sizes == [columns * rows]              # one box per cell, grouped by the fast path
