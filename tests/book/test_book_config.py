"""The course site's configuration (book/): every page is in it, the answers apart.

The site itself is built by ``make book`` (CI) and opened in Chromium by
``tests/browser/test_book.py``; these checks are cheap and run in the fast suite.
"""

from __future__ import annotations

from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
BOOK = ROOT / "book"


def _toc() -> dict:
    return yaml.safe_load((BOOK / "_toc.yml").read_text(encoding="utf-8"))


def _files(part: dict) -> list[str]:
    return [c["file"] for c in part["chapters"]]


def test_every_notebook_and_every_guide_page_is_on_the_site():
    toc = _toc()
    listed = {toc["root"]} | {f for part in toc["parts"] for f in _files(part)}
    notebooks = {f"notebooks/{p.stem}" for p in (ROOT / "notebooks").glob("*.ipynb")}
    answers = {f"notebooks/answers/{p.stem}"
               for p in (ROOT / "notebooks" / "answers").glob("*.ipynb")}
    docs = {f"docs/{p.stem}" for p in (ROOT / "docs").glob("*.md")}
    missing = sorted((notebooks | answers | docs | {"notebooks/GLOSSARY"}) - listed)
    assert not missing, f"add to book/_toc.yml: {missing}"
    assert toc["root"] == "notebooks/index"


def test_the_answers_are_a_part_of_their_own():
    parts = {p["caption"].split(" ")[0]: _files(p) for p in _toc()["parts"]}
    assert set(parts) == {"Course", "Answers", "User"}
    assert all(f.startswith("notebooks/answers/") for f in parts["Answers"])
    assert not any("answers" in f for f in parts["Course"] + parts["User"])


def test_the_site_renders_executed_notebooks_with_binder_links():
    config = yaml.safe_load((BOOK / "_config.yml").read_text(encoding="utf-8"))
    assert config["execute"]["execute_notebooks"] == "off"  # executed by make book itself
    assert config["launch_buttons"]["binderhub_url"] == "https://mybinder.org"
    assert config["repository"]["url"].endswith("/dpgp_audit")
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    recipe = makefile[makefile.index("\nbook: $(NB_STAMP)"):]
    recipe = recipe[:recipe.index("\n\n")]
    assert "papermill" in recipe and "$(NB_PARAMS)/$$stem.yaml" in recipe
    assert "--execution-timeout" in recipe and "jupyter-book build" in recipe
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert ci.index("make binder-check") < ci.index("make book")
