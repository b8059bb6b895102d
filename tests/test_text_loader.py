from scanner.loaders import load_bytes
from scanner.units import Channel


def test_paragraphs_and_markdown_comments():
    src = "# Título\n\nPrimer párrafo\ncontinúa.\n\n<!-- nota para el asistente -->\nÚltimo\n"
    doc = load_bytes(src.encode(), "notes.md")
    got = [(u.channel, u.text) for u in doc.units]
    assert got == [(Channel.PLAIN_TEXT, "# Título"), (Channel.PLAIN_TEXT, "Primer párrafo\ncontinúa."),
                   (Channel.COMMENT, " nota para el asistente "), (Channel.PLAIN_TEXT, "Último")]
    for u in doc.units:
        assert src[u.start:u.end] == u.text


def test_text_file_keeps_comment_syntax_as_text():
    doc = load_bytes(b"a <!-- b --> c", "notes.txt")
    assert [(u.channel, u.text) for u in doc.units] == [(Channel.PLAIN_TEXT, "a <!-- b --> c")]
