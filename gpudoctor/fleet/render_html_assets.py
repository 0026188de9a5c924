"""The fleet page's one stylesheet and one script, and the Content-Security-Policy that admits exactly them.

Both are constants, inlined into the page: the report must open from a file on a machine with no network,
and must load nothing when it does.  The policy allows only these two blocks, by their sha256, so markup
that ever slipped past the escaping (a node named ``<script>``) still could not run or load anything.
"""

from __future__ import annotations

import base64
import hashlib

# Colours are paired with a symbol and the status word in every cell: the status is never colour alone.
STYLE = """
:root { color-scheme: light; font-family: system-ui, -apple-system, "Segoe UI", sans-serif; }
body { margin: 1.5rem; color: #1b1f24; background: #fff; line-height: 1.4; }
h1 { font-size: 1.5rem; margin: 0 0 .5rem; }
h2 { font-size: 1.2rem; margin: 2rem 0 .5rem; }
code { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace; background: #f3f4f6;
  padding: 0 .25em; border-radius: 3px; overflow-wrap: anywhere; }
.headline { font-weight: 600; }
.counts { list-style: none; display: flex; flex-wrap: wrap; gap: .5rem; padding: 0; margin: .5rem 0 1rem; }
.counts li { border: 1px solid #d0d7de; border-radius: 6px; padding: .3rem .7rem; }
.counts .n { font-size: 1.3rem; font-weight: 700; margin-right: .3em; }
.scroll { overflow: auto; max-height: 80vh; width: fit-content; max-width: 100%; border: 1px solid #d0d7de; }
table { border-collapse: collapse; font-size: .85rem; }
th, td { border: 1px solid #d0d7de; padding: .2rem .45rem; text-align: left; vertical-align: top;
  white-space: nowrap; }
thead th { position: sticky; top: 0; background: #eef1f4; z-index: 1; }
tbody th { font-weight: 600; background: #fafbfc; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
th button { font: inherit; font-weight: 700; color: inherit; background: none; border: 0; padding: 0;
  cursor: pointer; text-align: left; }
th[aria-sort="ascending"] button::after { content: " \\25B2"; }
th[aria-sort="descending"] button::after { content: " \\25BC"; }
.s-ok { background: #e6f4ea; color: #1e4620; }
.s-consequence { background: #eef1f4; color: #3d4852; }
.s-warning { background: #fff4ce; color: #5c4400; }
.s-problem { background: #fde7e9; color: #8a1020; font-weight: 700; }
.s-crashed { background: #f3e5f5; color: #4a148c; font-weight: 700; }
.s-unknown { background: #eceff1; color: #37474f; font-weight: 700; }
.s-none { color: #6a737d; }
.s-ok::before { content: "\\2713  "; }
.s-warning::before { content: "\\25B2  "; }
.s-problem::before { content: "\\2716  "; }
.s-crashed::before { content: "\\203C  "; }
.s-unknown::before { content: "?  "; }
.groups { list-style: none; padding: 0; }
.groups > li { border: 1px solid #d0d7de; border-left-width: 6px; border-radius: 4px; padding: .5rem .8rem;
  margin: 0 0 .6rem; }
.g-problem { border-left-color: #c62828; }
.g-warning { border-left-color: #b08800; }
.g-crashed, .g-unknown { border-left-color: #6a1b9a; }
.groups p { margin: .2rem 0; }
.nodes-list { overflow-wrap: anywhere; }
.sr { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
.muted { color: #6a737d; }
td.wrap { white-space: normal; min-width: 24ch; overflow-wrap: anywhere; }
"""

# Sorting rebuilds the body off-document (a DocumentFragment into a new tbody swapped in once), so a
# 10,000-row table reflows once per click, not once per row.  Keys are read from the cells once per column
# and cached.  Status cells sort by the rank of their class (which the renderer draws from a fixed set),
# numbers numerically, everything else naturally (node2 before node10) with the platform's collator.
SCRIPT = """
(function () {
  "use strict";
  var RANK = {"s-none": 0, "s-ok": 1, "s-consequence": 1, "s-warning": 2, "s-unknown": 3, "s-crashed": 3,
    "s-problem": 4};
  var collator = new Intl.Collator(undefined, {numeric: true, sensitivity: "base"});
  var live = document.getElementById("sort-status");
  function cellKey(cell, type) {
    if (!cell) { return type === "text" ? "" : -Infinity; }
    if (type === "rank") { var rank = RANK[cell.className]; return rank === undefined ? 0 : rank; }
    if (type === "num") { var value = parseFloat(cell.textContent); return isNaN(value) ? -Infinity : value; }
    return cell.textContent.trim();
  }
  function byValue(a, b) { return a < b ? -1 : (a > b ? 1 : 0); }
  function makeSortable(table) {
    var headers = table.tHead.rows[0].cells;
    var rows = Array.prototype.slice.call(table.tBodies[0].rows);
    var keys = {};
    var current = -1;
    var direction = 0;
    function sortBy(col) {
      var header = headers[col];
      var type = header.getAttribute("data-type") || "text";
      direction = col === current ? -direction : (type === "rank" ? -1 : 1);
      current = col;
      if (!keys[col]) { keys[col] = rows.map(function (row) { return cellKey(row.cells[col], type); }); }
      var key = keys[col];
      var compare = type === "text" ? collator.compare : byValue;
      var dir = direction;
      var order = rows.map(function (row, index) { return index; });
      order.sort(function (a, b) { return dir * compare(key[a], key[b]) || a - b; });
      var fragment = document.createDocumentFragment();
      for (var i = 0; i < order.length; i++) { fragment.appendChild(rows[order[i]]); }
      var body = document.createElement("tbody");
      body.appendChild(fragment);
      table.replaceChild(body, table.tBodies[0]);
      var words = dir > 0 ? "ascending" : "descending";
      for (var h = 0; h < headers.length; h++) {
        if (h === col) { headers[h].setAttribute("aria-sort", words); } else { headers[h].removeAttribute("aria-sort"); }
      }
      if (live) { live.textContent = "Sorted by " + header.textContent.trim() + ", " + words + "."; }
    }
    Array.prototype.forEach.call(headers, function (header, col) {
      var button = header.querySelector("button");
      if (button) { button.addEventListener("click", function () { sortBy(col); }); }
    });
  }
  Array.prototype.forEach.call(document.querySelectorAll("table.sortable"), makeSortable);
})();
"""


def csp_source_hash(block: str) -> str:
    """The CSP source expression (``'sha256-…'``) that admits an inline block whose text is exactly ``block``."""
    digest = hashlib.sha256(block.encode("utf-8")).digest()
    return f"'sha256-{base64.b64encode(digest).decode('ascii')}'"


def content_security_policy(script: str, style: str) -> str:
    """Nothing may load (``default-src 'none'``); only this script and this stylesheet may apply."""
    return (
        f"default-src 'none'; script-src {csp_source_hash(script)}; style-src {csp_source_hash(style)}; "
        "base-uri 'none'; form-action 'none'"
    )
