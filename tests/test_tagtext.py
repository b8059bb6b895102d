"""strip_tags and tag_names say exactly what the regexes they replace say (scanner/injection/tagtext.py)."""

from hypothesis import given, settings
from hypothesis import strategies as st

from scanner import rx
from scanner.injection.tagtext import strip_tags, tag_names

TAG = rx.compile(r"<[^>]*>")
TAG_NAME = rx.compile(r"</?([a-zA-Z][a-zA-Z0-9-]*)")

# Markup-heavy text: the characters the regexes look at, letters, digits, a hyphen, space, non-ASCII.
markup = st.text(alphabet=st.sampled_from(list("<>/!-aZb0 \n\té\u200b=\"")), max_size=60)


@settings(max_examples=400, deadline=None)
@given(markup)
def test_strip_tags_is_the_regex_sub(s):
    assert strip_tags(s) == TAG.sub("", s)


@settings(max_examples=400, deadline=None)
@given(markup)
def test_tag_names_is_the_regex_findall(s):
    assert tag_names(s) == TAG_NAME.findall(s)


def test_examples():
    s = "a<b>c</span >d<<x>e>f<unclosed"
    assert strip_tags(s) == TAG.sub("", s) == "acde>f<unclosed"
    assert tag_names(s) == ["b", "span", "x", "unclosed"]
    assert tag_names("</ a><1b></-c>< d>") == []
