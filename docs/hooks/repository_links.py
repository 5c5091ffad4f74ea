"""mkdocs hook: a link from a page to a file outside the documentation (the README, BENCHMARKS.md, a
source file) or to a folder points at that file in the repository, so the same Markdown works on the
repository's web pages and on the site. Every other link is checked by mkdocs (strict)."""

from __future__ import annotations

import posixpath
import re
from pathlib import Path

# the repository's address, declared once: pyproject.toml's [project.urls] Homepage (the README's links use it too)
_HOMEPAGE = re.search(r'^Homepage = "([^"]+)"', (Path(__file__).parents[2] / "pyproject.toml").read_text(), re.M)
if _HOMEPAGE is None:
    raise RuntimeError("pyproject.toml declares no [project.urls] Homepage: the site's links to files need it")
REPOSITORY = f"{_HOMEPAGE.group(1)}/blob/main/"
LINK = re.compile(r"\]\((?!https?:|#|mailto:)([^)\s#]+)(#[^)\s]*)?\)")


def on_page_markdown(markdown: str, page, config, files) -> str:  # noqa: ANN001 - mkdocs' hook signature
    docs = Path(config["docs_dir"]).resolve()
    root = docs.parent
    here = posixpath.dirname(page.file.src_uri)

    def rewrite(match: re.Match) -> str:
        target, anchor = match.group(1), match.group(2) or ""
        path = (docs / here / target).resolve()
        inside_docs = docs in path.parents or path == docs
        if inside_docs and path.suffix == ".md" or inside_docs and path.is_file():
            return match.group(0)  # a page or an image of the site: mkdocs checks it
        return f"]({REPOSITORY}{path.relative_to(root).as_posix()}{anchor})"

    return LINK.sub(rewrite, markdown)
