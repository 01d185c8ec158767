#!/usr/bin/env python3
"""Writes a man page (roff, man macros) from the Markdown the docs are
written in, so that a man page and its Markdown never say two things.

usage: md2man.py --name NAME --section N --summary TEXT --version V IN OUT

The Markdown is the subset docs/ uses: the "# " title and one-line
<!-- comments --> (dropped: the man page has its own title), "## "
sections (.SH), "### " subsections (.SS), paragraphs, "* " bullets,
fenced code blocks, and tables, each row of which becomes a tagged
paragraph: the first cell the tag, the middle cells "Header: value", the
last the text.  Inline: `code` and **bold** in bold, *emphasis* in
italics, [text](target) as its text.  Nothing outside ASCII is left raw,
so groff needs no preconv.  Text before the first "## " heading is the
DESCRIPTION."""

import argparse
import re
import sys

INLINE = re.compile(
    r"`(?P<code>[^`]+)`"
    r"|\*\*(?P<bold>.+?)\*\*"
    r"|(?<![\w*])\*(?P<em>[^*\s](?:[^*]*[^*\s])?)\*(?![\w*])"
    r"|\[(?P<link>[^\]]+)\]\([^)]*\)")
COMMENT = re.compile(r"^<!--.*-->$")  # a note to the editors, not shown


def escape(text, code=False):
    """Plain text as roff: backslashes escaped, characters outside ASCII
    by code point (no preconv needed), and in code every '-' a real minus,
    so that options copied from the page work."""
    out = []
    for ch in text:
        if ch == "\\":
            out.append("\\e")
        elif ch == "-" and code:
            out.append("\\-")
        elif ord(ch) > 127:
            out.append("\\[u%04X]" % ord(ch))
        else:
            out.append(ch)
    return "".join(out)


def inline(text):
    out, pos = [], 0
    for m in INLINE.finditer(text):
        out.append(escape(text[pos:m.start()]))
        if m.group("code") is not None:
            out.append("\\fB" + escape(m.group("code"), code=True) + "\\fR")
        elif m.group("bold") is not None:
            out.append("\\fB" + inline(m.group("bold")) + "\\fR")
        elif m.group("em") is not None:
            out.append("\\fI" + inline(m.group("em")) + "\\fR")
        else:
            out.append(inline(m.group("link")))
        pos = m.end()
    out.append(escape(text[pos:]))
    return "".join(out)


def text_lines(text):
    """Roff lines of inline text: a line that would start with a control
    character is guarded with \\&."""
    line = inline(text.strip())
    return ["\\&" + line if line[:1] in (".", "'") else line]


def cells(row):
    """The cells of a table row; a '|' inside `code` is not a border."""
    parts, cur, in_code = [], [], False
    for ch in row.strip().strip("|"):
        if ch == "`":
            in_code = not in_code
        if ch == "|" and not in_code:
            parts.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    parts.append("".join(cur).strip())
    return parts


def table(rows):
    head = cells(rows[0])
    out = []
    for row in rows[2:]:
        c = cells(row)
        if len(c) != len(head):
            raise ValueError("table row with %d cells, header has %d: %s"
                             % (len(c), len(head), row))
        out.append(".TP")
        out += text_lines(c[0])
        middle = ["%s: %s" % (h[:1].upper() + h[1:], v)
                  for h, v in zip(head[1:-1], c[1:-1]) if v]
        if middle:
            out += text_lines("; ".join(middle) + ".")
            out.append(".br")
        if len(c) > 1:
            out += text_lines(c[-1])
    return out


def convert(md, name, section, summary, version):
    lines = md.splitlines()
    # .nh: no hyphenation, which would break names, options and paths
    # across lines.
    out = ['.TH "%s" "%s" "" "gvs %s" "gvs manual"'
           % (name.upper(), section, version), ".nh",
           ".SH NAME", "%s \\- %s" % (escape(name), escape(summary))]
    i, started = 0, False
    para = []

    def flush():
        if para:
            out.append(".PP")
            out.extend(text_lines(" ".join(para)))
            para.clear()

    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        if line.startswith("# ") or COMMENT.match(stripped):
            i += 1
            continue
        if line.startswith("## ") or line.startswith("### "):
            flush()
            level, title = line.split(" ", 1)
            title = escape(title.strip()).replace('"', "\\(dq")
            if level == "##":
                out.append('.SH "%s"' % title.upper())
            else:
                out.append('.SS "%s"' % title)
            started = True
            i += 1
            continue
        if not started and stripped:
            out.append(".SH DESCRIPTION")
            started = True
        if stripped.startswith("```"):
            flush()
            out += [".PP", ".RS 4", ".nf"]
            i += 1
            while i < len(lines) and not lines[i].strip().startswith("```"):
                code = escape(lines[i])
                out.append("\\&" + code if code[:1] in (".", "'") else code)
                i += 1
            out += [".fi", ".RE"]
            i += 1
            continue
        if stripped.startswith("|"):
            flush()
            rows = []
            while i < len(lines) and lines[i].strip().startswith("|"):
                rows.append(lines[i])
                i += 1
            out += table(rows)
            continue
        if stripped.startswith("* ") or stripped.startswith("- "):
            flush()
            item = [stripped[2:]]
            i += 1
            while (i < len(lines) and lines[i].startswith("  ")
                   and lines[i].strip()):
                item.append(lines[i].strip())
                i += 1
            out += [".IP \\(bu 2"] + text_lines(" ".join(item))
            continue
        if stripped:
            para.append(stripped)
        else:
            flush()
        i += 1
    flush()
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--name", required=True)
    ap.add_argument("--section", required=True)
    ap.add_argument("--summary", required=True)
    ap.add_argument("--version", required=True)
    ap.add_argument("input")
    ap.add_argument("output")
    a = ap.parse_args()
    with open(a.input, encoding="utf-8") as f:
        md = f.read()
    try:
        page = convert(md, a.name, a.section, a.summary, a.version)
    except ValueError as e:
        sys.exit("md2man: %s: %s" % (a.input, e))
    with open(a.output, "w", encoding="utf-8") as f:
        f.write(page)


if __name__ == "__main__":
    main()
