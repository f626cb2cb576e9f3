"""Sphinx extension for the tensorlib website: the API reference and the book's links into it.

Loaded by ``book/_config.yml`` (``sphinx.local_extensions``). At build time it

* writes the API reference, ``book/reference/NN_topic.rst`` (one page per chapter, gitignored),
  from the installed package (``tools/api_reference.py``): every public name, rendered by autodoc,
  linked to the chapter section that derives it. ``_toc.yml`` picks the pages up with a glob, so
  a merged chapter appears without hand work;
* gives each chapter section that holds an exported cell the label ``tl-derive-NN_topic-K``
  (K: the cell's number, as in the ``# %% book/NN_topic.ipynb, cell K`` markers of the generated
  modules), which the reference's "Derived in" links point at;
* replaces the ``#| default_exp`` / ``#| export`` lines at the top of a code cell by a small label,
  "exported to tensorlib/nn/init.py", linked to that module's reference (the notebooks keep
  their directives);
* links inline code that names a public tensorlib object (``tl.softmax``, ``F.cross_entropy``,
  ``nn.Linear``, ``Tensor.backward``, ``Linear``) to its reference entry;
* puts a "Download this notebook" link at the top of every notebook page (chapters and
  solutions), served from the site's ``_downloads/``;
* reads the docstrings' Google-style sections (``Args:``, ``Returns:``) with
  ``sphinx.ext.napoleon``, which it loads as an extension; napoleon's own pass is switched off in
  ``book/_config.yml`` (it would read a property's first line "Where the memory lives: ..." as a
  type), and this extension applies napoleon's ``GoogleDocstring`` to every other docstring.
"""

from __future__ import annotations

import ast
import inspect
import re
import sys
from pathlib import Path
from typing import Any

from docutils import nodes
from sphinx import addnodes
from sphinx.application import Sphinx
from sphinx.ext.autodoc import preserve_defaults
from sphinx.ext.napoleon.docstring import GoogleDocstring
from sphinx.transforms import SphinxTransform
from sphinx.util import logging

sys.path.insert(0, str(Path(__file__).resolve().parent))
import api_reference  # noqa: E402  (tools/ is a folder of scripts, not a package)

logger = logging.getLogger(__name__)

REFERENCE_FOLDER = "reference"
DIRECTIVE = re.compile(r"^#\|\s*(?P<words>.*)$")
STATIC = Path(__file__).resolve().parent / "static"
CSS_FILE = "tensorlib.css"
# Where an inline literal is left alone: headings, existing links, signatures, code blocks.
NO_LINK_PARENTS = (
    nodes.title,
    nodes.reference,
    addnodes.pending_xref,
    addnodes.desc_signature,
    addnodes.download_reference,
    nodes.literal_block,
    nodes.caption,
)


def _generate_reference(app: Sphinx, config: Any) -> None:
    """Write the reference pages before Sphinx looks for source files."""
    modules = api_reference.collect()
    titles = api_reference.chapter_titles(Path(app.srcdir))
    pages = api_reference.chapter_pages(modules, titles)
    name, text = api_reference.packages_page(modules)
    pages[name] = text
    api_reference.write_pages(pages, Path(app.srcdir) / REFERENCE_FOLDER)
    app.tensorlib_link_targets = api_reference.link_targets(modules)  # type: ignore[attr-defined]
    app.tensorlib_modules = {info.name for info in modules}  # type: ignore[attr-defined]
    missing = api_reference.missing_docstrings(modules)
    if missing:
        logger.warning("public tensorlib names without a docstring: %s", ", ".join(missing))


def _module_path(module: str) -> str:
    return "tensorlib/" + module.replace(".", "/") + ".py"


def _split_directives(text: str) -> tuple[list[list[str]], str]:
    """The leading ``#|`` lines of a cell (as word lists) and the code after them."""
    lines = text.split("\n")
    directives = []
    while lines and DIRECTIVE.match(lines[0]):
        directives.append(DIRECTIVE.match(lines[0])["words"].split())
        lines.pop(0)
    return directives, "\n".join(lines)


class NotebookCells(SphinxTransform):
    """Export labels, derivation labels and the download link, on notebook pages."""

    default_priority = 500

    def apply(self, **kwargs: Any) -> None:
        source = Path(self.document.get("source", ""))
        if source.suffix != ".ipynb":
            return
        self._download_link(source)
        default_module: str | None = None
        for cell in list(self.document.findall(nodes.container)):
            if cell.get("nb_element") != "cell_code" or "cell_index" not in cell:
                continue
            code = next(
                (child for child in cell.findall(nodes.literal_block)
                 if child.parent.get("nb_element") == "cell_code_source"),
                None,
            )
            if code is None:
                continue
            directives, rest = _split_directives(code.astext())
            modules = []
            for words in directives:
                if words[:1] == ["default_exp"] and len(words) == 2:
                    default_module = words[1]
                elif words[:1] == ["export"]:
                    target = words[1] if len(words) == 2 else default_module
                    if target:
                        modules.append(target)
            if not directives:
                continue
            code.children = [nodes.Text(rest)]
            code.rawsource = rest
            names_default = any(words[:1] == ["default_exp"] for words in directives)
            if modules:
                cell.insert(0, self._label(modules[0], "exported to ", names_default))
                self._derivation_label(cell, source.stem, int(cell["cell_index"]) + 1)
            elif names_default and default_module:
                cell.insert(0, self._label(default_module, "this chapter's module: ", False))

    def _label(self, module: str, text: str, default: bool) -> nodes.paragraph:
        dotted = f"tensorlib.{module}"
        path = nodes.literal(_module_path(module), _module_path(module))
        known = dotted in getattr(self.app, "tensorlib_modules", set())
        if known:
            link = addnodes.pending_xref(
                "", path, refdomain="py", reftype="mod", reftarget=dotted, refexplicit=True,
                refwarn=True, refdoc=self.env.docname,
            )
        else:  # a module of an unexported draft: no reference entry to link to
            link = path
        parts: list[nodes.Node] = [nodes.Text(text), link]
        if default:
            parts.append(nodes.Text(" (this chapter's module)"))
        return nodes.paragraph("", "", *parts, classes=["tl-export-label"])

    def _derivation_label(self, cell: nodes.Element, stem: str, number: int) -> None:
        section = cell.parent
        while section is not None and not isinstance(section, nodes.section):
            section = section.parent
        if section is None or not section["ids"]:
            return
        label = api_reference.derive_label(stem, number)
        section["names"].append(label)
        self.document.nametypes[label] = True
        self.document.nameids[label] = section["ids"][0]

    def _download_link(self, source: Path) -> None:
        section = next(iter(self.document.findall(nodes.section)), None)
        if section is None or not isinstance(section[0], nodes.title):
            return
        link = addnodes.download_reference(
            "", "", nodes.literal(source.name, source.name), refdoc=self.env.docname,
            reftarget=source.name, refexplicit=True, refdomain="", reftype="download",
        )
        paragraph = nodes.paragraph(
            "", "", nodes.Text("Download this notebook: "), link,
            nodes.Text(" (open it in Jupyter to run every cell)."), classes=["tl-download"],
        )
        section.insert(1, paragraph)


class LinkPublicNames(SphinxTransform):
    """Inline code naming a public tensorlib object becomes a link to its reference entry."""

    default_priority = 510

    def apply(self, **kwargs: Any) -> None:
        targets: dict[str, tuple[str, str]] = getattr(self.app, "tensorlib_link_targets", {})
        if not targets:
            return
        for literal in list(self.document.findall(nodes.literal)):
            if "tl-export-label" in literal.parent.get("classes", []):
                continue
            parent, inside = literal.parent, False
            while parent is not None:
                if isinstance(parent, NO_LINK_PARENTS):
                    inside = True
                    break
                parent = parent.parent
            if inside:
                continue
            text = literal.astext().strip()
            found = targets.get(text.removesuffix("()"))
            if found is None:
                continue
            role, target = found
            xref = addnodes.pending_xref(
                "", refdomain="py", reftype=role, reftarget=target, refexplicit=True,
                refwarn=True, refdoc=self.env.docname,
            )
            literal.replace_self(xref)
            xref += literal
            literal["classes"] = [*literal.get("classes", []), "xref", "tl-api-link"]


LITERAL = re.compile(r"``.+?``")
SEVERAL_NAMES = re.compile(r"^(\s*:(?:ivar|param|var|cvar|keyword) )(\w+(?:, \w+)+)(?=:)")
# Inline markup that a docstring's stray asterisks must not be escaped inside.
MARKUP = re.compile(r"``.+?``|:[\w:-]+:`[^`]*`|`[^`]*`_{0,2}")
# *emphasis* and **strong** as a writer means them: after a space, around a word.
EMPHASIS = re.compile(r"(?<!\S)\*{1,2}\w[^*]*?(?<=[\w.)])\*{1,2}(?![\w*])")


def _escape_stray_asterisks(text: str) -> str:
    """``(*, in_features)`` in prose: escape each ``*`` that does not open or close emphasis."""
    kept = {match.start() for match in EMPHASIS.finditer(text)}
    kept |= {match.end() - 1 for match in EMPHASIS.finditer(text)}
    kept |= {
        match.start() + 1
        for match in EMPHASIS.finditer(text)
        if text[match.start() :].startswith("**")
    }
    kept |= {
        match.end() - 2 for match in EMPHASIS.finditer(text) if text[: match.end()].endswith("**")
    }
    out = []
    for index, char in enumerate(text):
        if char == "*" and index not in kept and (index == 0 or text[index - 1] != "\\"):
            out.append("\\*")
        else:
            out.append(char)
    return "".join(out)


def _separate_literals(line: str) -> str:
    """````where``s`` -> ````where``\\ s``: a literal glued to a word needs an escaped space."""
    out, last = [], 0
    for match in LITERAL.finditer(line):
        out.append(line[last:match.start()])
        if match.start() > 0 and line[match.start() - 1].isalnum():
            out.append("\\ ")
        out.append(match.group(0))
        if match.end() < len(line) and line[match.end()].isalnum():
            out.append("\\ ")
        last = match.end()
    out.append(line[last:])
    return "".join(out)


def _clean_docstring_line(line: str) -> str:
    """Make one docstring line valid reStructuredText without changing what it says."""
    if line.lstrip().startswith(".. ") or line.lstrip().startswith(":"):
        head, _, tail = line.partition(": ") if line.lstrip().startswith(":") else (line, "", "")
        if not tail:
            return line
        return head + ": " + _clean_docstring_line(tail)
    line = _separate_literals(line)
    parts, last = [], 0
    for match in MARKUP.finditer(line):
        parts.append(_escape_stray_asterisks(line[last:match.start()]))
        parts.append(match.group(0))
        last = match.end()
    parts.append(_escape_stray_asterisks(line[last:]))
    return "".join(parts)


def _clean_docstring(
    app: Sphinx, what: str, name: str, obj: Any, options: Any, lines: list[str]
) -> None:
    """The package's docstrings are written for ``help()`` first: plain prose with a few
    reStructuredText roles and Google-style sections, which napoleon turns into fields (not in
    a property's docstring, where napoleon would read "Where the memory lives: ..." as a type).
    Then this escapes what reStructuredText would misread: an asterisk in a shape such as
    ``(*, in_features)`` and a literal followed by a letter (````where``s``)."""
    if what not in ("attribute", "property", "data"):  # "name: text" is not a type there
        lines[:] = GoogleDocstring(lines, app.config, app, what, name, obj, options).lines()
    # "n_layer, n_head, n_embd: ..." documents three names in one field; a field's name may not
    # hold spaces (Sphinx would read the first words as a type).
    lines[:] = [
        SEVERAL_NAMES.sub(lambda m: m.group(1) + m.group(2).replace(", ", ","), line)
        for line in lines
    ]
    lines[:] = [_clean_docstring_line(line) for line in lines]


def _member_of(cls: type, member: str, objects: dict[str, Any]) -> str | None:
    """The documented ``Class.member`` for a member a class has or inherits (MRO order)."""
    for base in cls.__mro__:
        name = f"{base.__module__}.{base.__qualname__}.{member}"
        if name in objects:
            return name
    return None


def _resolve_public_names(app: Sphinx, env: Any, node: Any, contnode: Any) -> Any:
    """Resolve what Python's own lookup misses in a docstring or type hint: a public name
    (``:class:`Module```, ``Generator``), a member inherited from a documented base class
    (``:meth:`step``` in a scheduler, ``:meth:`Optimizer.load_state_dict```)."""
    if node.get("refdomain") != "py":
        return None
    targets: dict[str, tuple[str, str]] = getattr(app, "tensorlib_link_targets", {})
    target = node.get("reftarget", "").lstrip("~.")
    domain = env.get_domain("py")
    found = targets.get(target)
    resolved = found[1] if found else None
    if resolved is None:
        owner, _, member = target.rpartition(".")
        if owner:  # Class.member, the class by a public or canonical name
            cls_name = targets.get(owner, (None, owner))[1]
        else:  # a bare member name, inside a class's docstring
            cls_name = (
                f"{node.get('py:module')}.{node.get('py:class')}" if node.get("py:class") else ""
            )
        module_name, _, qualname = cls_name.rpartition(".")
        cls = getattr(sys.modules.get(module_name), qualname, None) if module_name else None
        if isinstance(cls, type):
            resolved = _member_of(cls, member or target, domain.objects)
    if resolved is None:
        # A helper that exists but is not public (in a module's __all__, not re-exported) has
        # no entry: show the name as code, unlinked. Anything else stays a broken reference.
        return contnode if _exists_in_package(target, node) else None
    return domain.resolve_xref(env, node["refdoc"], app.builder, "obj", resolved, node, contnode)


def _exists_in_package(target: str, node: Any) -> bool:
    module, cls = node.get("py:module") or "", node.get("py:class") or ""
    for dotted in (target, f"{module}.{target}", f"{module}.{cls}.{target}"):
        if not dotted.startswith("tensorlib."):
            continue
        parts = dotted.split(".")
        for split in range(len(parts) - 1, 0, -1):
            obj = sys.modules.get(".".join(parts[:split]))
            if obj is None:
                continue
            for name in parts[split:]:
                obj = getattr(obj, name, None)
            if obj is not None:
                return True
    return False


def _add_static(app: Sphinx) -> None:
    if app.builder.format == "html":
        app.config.html_static_path.append(str(STATIC))


def _takes_added_out(obj: Any) -> bool:
    """Whether ``obj`` is a wrapper made by ``tensorlib.engine.out_arg.supports_out``: its
    signature has an ``out`` keyword that the function it wraps (its source) does not."""
    inner = getattr(obj, "__wrapped__", None)
    if inner is None:
        return False
    try:
        return "out" in inspect.signature(obj).parameters and (
            "out" not in inspect.signature(inner).parameters
        )
    except (TypeError, ValueError):
        return False


def _arguments_with_out(get_arguments: Any) -> Any:
    """``autodoc_preserve_defaults`` reads a function's defaults from its source and pairs them
    with its signature's; a ``supports_out`` wrapper's signature has one more keyword-only
    default (``out=None``) than the wrapped source shows, and Sphinx stops on the mismatch. This
    adds it to the parsed arguments, so the two agree."""

    def arguments(obj: Any) -> ast.arguments | None:
        parsed = get_arguments(obj)
        if parsed is not None and _takes_added_out(obj):
            parsed.kwonlyargs.append(ast.arg("out"))
            parsed.kw_defaults.append(ast.Constant(None))
        return parsed

    arguments.adds_out = True  # type: ignore[attr-defined]
    return arguments


def setup(app: Sphinx) -> dict[str, Any]:
    app.connect("config-inited", _generate_reference, priority=100)
    app.connect("builder-inited", _add_static)
    app.add_css_file(CSS_FILE)
    app.add_transform(NotebookCells)
    app.add_transform(LinkPublicNames)
    # napoleon, loaded as an ordinary extension: its napoleon_* settings and the Python domain's
    # Google-style fields. book/_config.yml switches its own docstring pass off, because
    # _clean_docstring applies napoleon's parser itself, to every docstring but a property's.
    app.setup_extension("sphinx.ext.napoleon")
    app.connect("autodoc-process-docstring", _clean_docstring)
    app.connect("missing-reference", _resolve_public_names)
    # a module-level function of Sphinx's, looked up at each call: the one place to add `out`
    # (once per process, however many builds run in it)
    if not getattr(preserve_defaults._get_arguments, "adds_out", False):  # type: ignore[attr-defined]
        preserve_defaults._get_arguments = _arguments_with_out(  # type: ignore[attr-defined]
            preserve_defaults._get_arguments  # type: ignore[attr-defined]
        )
    return {"parallel_read_safe": True, "parallel_write_safe": True}
