"""A real headless Chromium for the HTML report's tests, driven by Playwright for Python, and a page opened in it.

Playwright's own browser download is not reachable here, so it drives the distro's Chromium by path:
``$GPUDOCTOR_CHROMIUM`` or the first of ``chromium``, ``chromium-browser``, ``google-chrome`` on PATH.
Tests skip, saying why, where Playwright or a browser is missing; a browser that is there but fails to
start is a failure (that is a broken machine, not an absent tool).
"""

from __future__ import annotations

import os
import pathlib
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

BROWSER_NAMES = ("chromium", "chromium-browser", "google-chrome")


def find_chromium() -> str | None:
    """The browser's executable: ``$GPUDOCTOR_CHROMIUM`` when set, else the first known name on PATH."""
    chosen = os.environ.get("GPUDOCTOR_CHROMIUM")
    if chosen:
        return chosen if os.path.isfile(chosen) and os.access(chosen, os.X_OK) else None
    for name in BROWSER_NAMES:
        found = shutil.which(name)
        if found:
            return found
    return None


@contextmanager
def headless_chromium() -> Iterator[Browser]:
    """A launched headless browser, closed on exit; skips the test when Playwright or Chromium is absent."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("Playwright for Python is not installed (pip install playwright; the browser comes from apt)")
    path = find_chromium()
    if path is None:
        where = os.environ.get("GPUDOCTOR_CHROMIUM") or "PATH (" + ", ".join(BROWSER_NAMES) + ")"
        pytest.skip(f"no Chromium found in {where}: apt-get install chromium, or set GPUDOCTOR_CHROMIUM")
    # As root, Chromium refuses to start with its sandbox; the pages it opens here are our own test pages.
    args = ["--no-sandbox"] if hasattr(os, "geteuid") and os.geteuid() == 0 else []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=path, args=args, headless=True)
        try:
            yield browser
        finally:
            browser.close()


@dataclass
class Opened:
    """A fleet page open in the browser, with what it asked the network for and what it complained about."""

    page: Page
    url: str
    requests: list[str] = field(default_factory=list)  # every request the page made, the page's own included
    errors: list[str] = field(default_factory=list)  # console errors and uncaught exceptions

    def row_names(self, table: str = "#nodes-table") -> list[str]:
        names: list[str] = self.page.eval_on_selector_all(
            f"{table} tbody tr > th", "cells => cells.map(c => c.textContent)"
        )
        return names

    def header(self, label: str, table: str = "#nodes-table") -> str:
        """The selector of the header cell whose button reads ``label``."""
        return f'{table} thead th:has(> button:text-is("{label}"))'

    def click_header(self, label: str, table: str = "#nodes-table") -> None:
        self.page.click(f"{self.header(label, table)} > button")

    def aria_sort(self, label: str, table: str = "#nodes-table") -> str | None:
        return self.page.get_attribute(self.header(label, table), "aria-sort")

    def strangers(self) -> list[str]:
        return [url for url in self.requests if url != self.url]


def open_page(browser: Browser, page_html: str, folder: pathlib.Path, javascript: bool = True) -> Opened:
    """``page_html`` written to ``folder`` and opened from its file:// URL in a fresh context.  Every request
    is routed: the page's own goes through, anything else is aborted (and recorded, for the test to fail on)."""
    path = folder / "fleet.html"
    path.write_text(page_html, encoding="utf-8")
    context = browser.new_context(java_script_enabled=javascript)
    page = context.new_page()
    opened = Opened(page, path.as_uri())
    page.on("request", lambda request: opened.requests.append(request.url))
    page.on("console", lambda message: opened.errors.append(message.text) if message.type == "error" else None)
    page.on("pageerror", lambda error: opened.errors.append(str(error)))
    page.route("**/*", lambda route: route.continue_() if route.request.url == opened.url else route.abort())
    page.goto(opened.url, wait_until="load")
    return opened
