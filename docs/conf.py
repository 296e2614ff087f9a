# Sphinx configuration of coalesce's documentation site: the guides (docs/*.md, through
# MyST-Parser) and the API reference (docs/api/, Doxygen's XML of the public headers' comments
# rendered by Breathe). Built by `cmake --workflow --preset docs` (docs/CMakeLists.txt), which runs
# Doxygen first and hands the XML's directory over as COALESCE_DOXYGEN_XML.
import logging as logging_module
import os
import pathlib
import re

from docutils import nodes
from docutils.transforms import Transform
from sphinx import addnodes
from sphinx.errors import ConfigError
from sphinx.util import logging

logger = logging.getLogger(__name__)

docs_dir = pathlib.Path(__file__).resolve().parent
repo_dir = docs_dir.parent
repository_url = "https://github.com/coalesce-cuda/coalesce"


def _version():
    text = (repo_dir / "include" / "coalesce" / "version.hpp").read_text()
    parts = [re.search(rf"#define COALESCE_VERSION_{p} (\d+)", text).group(1) for p in ("MAJOR", "MINOR", "PATCH")]
    return ".".join(parts)


project = "coalesce"
author = "the coalesce authors"
copyright = "the coalesce authors"
release = version = _version()

extensions = ["myst_parser", "breathe"]
root_doc = "index"
source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
# docs/bench/ holds measurements: its Markdown reports are pages (linked from the guides, outside
# the navigation: see bench_pages_are_orphans below), its text, CSV and JSON files are linked as
# downloads, and its charts are images.
exclude_patterns = ["**/.*"]
templates_path = []
html_static_path = []

# --- the guides -----------------------------------------------------------------------------------
# Headings get anchors so that links such as [..](algorithms.md#for-each) resolve, as on GitHub.
myst_heading_anchors = 4
myst_enable_extensions = ["colon_fence"]

# --- the API reference ------------------------------------------------------------------------------
doxygen_xml = os.environ.get("COALESCE_DOXYGEN_XML", str(repo_dir / "build" / "docs" / "doxygen" / "xml"))
breathe_projects = {"coalesce": doxygen_xml}
breathe_default_project = "coalesce"
breathe_domain_by_extension = {"hpp": "cpp"}
breathe_show_include = False  # each page shows its #include once, at the top
# Undocumented members stay out of the pages; Doxygen has already failed the build for any public one.
breathe_default_members = ("members",)
# The execution-space macros stay in the signatures Doxygen writes (docs/Doxyfile.in), so that the
# reference says where a function runs; Sphinx's C++ parser reads them as attributes.
cpp_id_attributes = ["COALESCE_HOST_DEVICE", "COALESCE_DEVICE", "COALESCE_HOST", "COALESCE_FORCEINLINE"]
cpp_index_common_prefix = ["coalesce::testing::", "coalesce::"]

# --- HTML -------------------------------------------------------------------------------------------
html_theme = "furo"
html_title = f"coalesce {release}"
html_theme_options = {"source_repository": repository_url, "source_branch": "main", "source_directory": "docs/"}
html_copy_source = False
html_show_sourcelink = False

nitpicky = False


# --- the API pages: one per public header --------------------------------------------------------
def public_headers():
    include = repo_dir / "include"
    return sorted(
        str(p.relative_to(include)) for p in (include / "coalesce").rglob("*.hpp") if "detail" not in p.parts
    )


def header_of_page(docname):
    """coalesce/<x>.hpp for the page api/<x> (api/testing/<x> for coalesce/testing/<x>.hpp)."""
    return "coalesce/" + docname[len("api/"):] + ".hpp"


def check_api_pages(app, env, docnames):
    """Every public header has its page under docs/api/, and every page there its header."""
    pages = {header_of_page(d) for d in env.found_docs if d.startswith("api/") and d != "api/index"}
    headers = set(public_headers())
    for header in sorted(headers - pages):
        logger.warning(
            f"{header} has no page in the API reference: add docs/api/{header[len('coalesce/'):-4]}.md, "
            f"a title and a {{coalesce-header}} {header} block as its neighbours have, and list it in "
            "docs/api/index.md",
            type="coalesce", subtype="api_page")
    for header in sorted(pages - headers):
        logger.warning(f"docs/api/ has a page for {header}, which is not a public header", type="coalesce",
                       subtype="api_page")


def header_opening(header):
    """A header's opening comment (its lines above #pragma once), without the markers."""
    lines = []
    for line in (repo_dir / "include" / header).read_text().splitlines():
        if not line.startswith("//"):
            break
        lines.append(line[2:].lstrip("/!").strip())
    text = " ".join(lines)
    return re.sub(r"^coalesce(::testing)?: ", "", text)


def markdown_text(text):
    """Plain text as Markdown: `code` stays code, and nothing else is markup (__CUDACC__, <x.hpp>)."""
    parts = text.split("`")
    for i in range(0, len(parts), 2):
        parts[i] = re.sub(r"([\\*_<>\[\]#|~])", r"\\\1", parts[i])
    return "`".join(parts) if len(parts) % 2 else text.replace("`", "\\`")


def api_page_source(app, docname, source):
    """Fills an API page's {coalesce-header} line with the header's opening comment and its reference."""
    if not docname.startswith("api/") or docname == "api/index":
        return
    header = header_of_page(docname)

    def expand(match):
        if match.group(1).strip() != header:
            return match.group(0)
        intro = markdown_text(header_opening(header)) if (repo_dir / "include" / header).is_file() else ""
        return (
            f"{intro}\n\n```cpp\n#include <{header}>\n```\n\n"
            # Doxygen names a file compound by its base name (the location keeps the path).
            f"```{{doxygenfile}} {header.rsplit('/', 1)[-1]}\n:project: coalesce\n```\n"
        )

    source[0] = re.sub(r"^```\{coalesce-header\}\s*(\S+)\s*\n```\s*$", expand, source[0], flags=re.M)


# --- the guides' table of contents ---------------------------------------------------------------
def guides_written(app, docname, source):
    """index.md names every guide in reading order; those not written yet are left out of its toctree."""
    if docname != root_doc:
        return
    out, in_toctree = [], False
    for line in source[0].split("\n"):
        if line.startswith("```{toctree}"):
            in_toctree = True
        elif line.startswith("```"):
            in_toctree = False
        elif in_toctree and re.fullmatch(r"[\w-]+", line.strip()) and not (docs_dir / f"{line.strip()}.md").is_file():
            logger.info(f"index: the guide {line.strip()}.md is not written yet; left out")
            continue
        out.append(line)
    source[0] = "\n".join(out)


# --- links out of the site -------------------------------------------------------------------------
class RepositoryLinks(Transform):
    """Links from a guide to files outside docs/ (../README.md, ../examples/...) go to the repository;
    a link to a folder inside docs/ goes to its README page, or to the repository's folder."""

    default_priority = 100

    def apply(self):
        env = self.document.settings.env
        srcdir = pathlib.Path(env.srcdir).resolve()
        for node in list(self.document.findall(addnodes.pending_xref)) + list(
                self.document.findall(addnodes.download_reference)):
            if node.get("reftype") != "myst":
                continue
            if node.get("refdomain") == "doc":
                self.markdown_outside(node, env, srcdir)
                continue
            target = node["reftarget"]
            path, _, anchor = target.partition("#")
            if not path or re.match(r"^[a-z]+:", path):
                continue
            resolved = (pathlib.Path(env.doc2path(env.docname)).parent / path).resolve()
            if not resolved.exists():
                continue
            try:
                inside = resolved.relative_to(srcdir)
            except ValueError:
                inside = None
            if inside is not None and resolved.is_file():
                continue  # a page, or a download MyST has already made of it
            if inside is not None and (resolved / "README.md").is_file():
                node.replace_self(addnodes.pending_xref(
                    "", *node.children, refdomain="doc", reftype="myst", refexplicit=True,
                    reftarget=env.path2doc(str(resolved / "README.md")), reftargetid=anchor or None,
                    refdoc=env.docname))
                continue
            node.replace_self(repository_reference(node, resolved, anchor))

    @staticmethod
    def markdown_outside(node, env, srcdir):
        """A Markdown file outside docs/ (../CHANGELOG.md): MyST takes it for a page of the site, which
        it is not, and would fail the build on it; it goes to the repository as the other files do."""
        target = node["reftarget"]
        if target in env.found_docs:
            return
        for suffix in env.config.source_suffix:
            resolved = (srcdir / (target + suffix)).resolve()
            if resolved.is_file() and srcdir not in resolved.parents:
                node.replace_self(repository_reference(node, resolved, node.get("reftargetid")))
                return


def repository_reference(node, resolved, anchor):
    """A link to `resolved`, a file or folder of the repository, on GitHub, with node's text."""
    relative = resolved.relative_to(repo_dir.resolve()).as_posix()
    kind = "tree" if resolved.is_dir() else "blob"
    url = f"{repository_url}/{kind}/main/{relative}" + (f"#{anchor}" if anchor else "")
    return nodes.reference("", "", *node.children, refuri=url, internal=False)


def bench_pages_are_orphans(app, doctree):
    """docs/bench/'s reports are reached through the guides' links, not the navigation."""
    if app.env.docname.startswith("bench/"):
        app.env.metadata[app.env.docname]["orphan"] = True


def reread_generated(app, env, added, changed, removed):
    """What Sphinx cannot see changing: index.md's toctree depends on which guides exist (read it
    again on every build), and the API pages on Doxygen's XML (read them again when it is new)."""
    again = [root_doc]
    xml_time = (pathlib.Path(doxygen_xml) / "index.xml").stat().st_mtime
    if getattr(env, "coalesce_xml_time", None) != xml_time:
        env.coalesce_xml_time = xml_time
        again += [d for d in env.found_docs if d.startswith("api/")]
    return again


class NamespacesOnEveryPage(logging_module.Filter):
    """An API page renders its header's names inside their namespace, so every page declares the
    namespace coalesce again; Sphinx reports each page after the first as a duplicate declaration.
    Those reports, and only those (a class or function declared twice still fails the build), are
    dropped."""

    def filter(self, record):
        message = record.getMessage()
        if "Duplicate C++ declaration" not in message:
            return True
        location = str(getattr(record, "location", "") or "")
        m = re.search(r"Declaration is '\.\. cpp:type:: ([\w:]+)'", message)
        return not (m and m.group(1) in namespace_names() and "api/" in location + message)


_namespaces = None


def namespace_names():
    global _namespaces
    if _namespaces is None:
        import xml.etree.ElementTree as ET

        index = ET.parse(pathlib.Path(doxygen_xml) / "index.xml").getroot()
        names = [c.findtext("name") for c in index.iter("compound") if c.get("kind") == "namespace"]
        _namespaces = {part for n in names for part in (n, n.split("::")[-1])}
    return _namespaces


def require_doxygen_xml(app, config):
    if not (pathlib.Path(doxygen_xml) / "index.xml").is_file():
        raise ConfigError(
            f"no Doxygen XML in {doxygen_xml}: build the site with `cmake --workflow --preset docs`, "
            "or run Doxygen first and give its xml/ directory as COALESCE_DOXYGEN_XML")


def setup(app):
    logging_module.getLogger("sphinx").addFilter(NamespacesOnEveryPage())
    app.connect("config-inited", require_doxygen_xml)
    app.connect("source-read", api_page_source)
    app.connect("source-read", guides_written)
    app.connect("env-before-read-docs", check_api_pages)
    app.connect("env-get-outdated", reread_generated)
    app.connect("doctree-read", bench_pages_are_orphans)
    app.add_transform(RepositoryLinks)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
