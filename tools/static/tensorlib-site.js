/* tensorlib website: navigation buttons that work on every screen, and a lighter, better search.
 *
 * Loaded in <head> before the theme's scripts (tools/sphinx_site.py adds it), so the globals below
 * exist when Sphinx's searchtools.js and the theme's deferred script run.
 */
"use strict";

/* 1. One primary and one secondary sidebar button.
 * sphinx-book-theme draws its ☰ and "contents" buttons (class primary-toggle / secondary-toggle) in
 * the article header; pydata-sphinx-theme 0.17 draws a second pair in its own top bar, which the
 * book theme keeps hidden. The theme's script wires only the first button of each class that it
 * finds, the hidden one, so the visible buttons did nothing. The hidden pair gives up the classes
 * (and the top bar, whose only visible content was a second search box, is hidden by
 * tensorlib.css) before the deferred theme script runs: a readystatechange to "interactive" comes
 * after parsing and before deferred scripts. */
(() => {
  const dropHiddenToggles = () => {
    document
      .querySelectorAll("#pst-header .primary-toggle, #pst-header .secondary-toggle")
      .forEach((button) => {
        button.classList.remove("primary-toggle", "secondary-toggle");
        button.setAttribute("hidden", "");
      });
  };
  if (document.readyState === "loading") {
    document.addEventListener("readystatechange", dropHiddenToggles, { once: true });
  } else {
    dropHiddenToggles();
  }
})();

/* 2. The search index loads when a reader starts a search, not with every page (only the search
 * page itself has a <script> for it: tools/sphinx_site.py removes it from the others). Sphinx's
 * Search queues a query until Search.setIndex is called by the index file. */
const tlLoadSearchIndex = (() => {
  let requested = false;
  return () => {
    if (requested || typeof Search === "undefined" || Search.hasIndex()) return;
    requested = true;
    const root = document.documentElement.dataset.content_root;
    for (const file of ["_static/tensorlib-aliases.js", "searchindex.js"]) {
      const script = document.createElement("script");
      script.src = root + file;
      script.async = false; // the aliases first, then the index (whose arrival runs the query)
      document.head.appendChild(script);
    }
  };
})();
document.addEventListener("DOMContentLoaded", () => {
  const dialog = document.getElementById("pst-search-dialog");
  const field = dialog && dialog.querySelector("input[name=q]");
  if (field) {
    ["focus", "keydown", "input"].forEach((kind) => field.addEventListener(kind, tlLoadSearchIndex));
  }
  document
    .querySelectorAll(".search-button__button, .search-button-field")
    .forEach((button) => button.addEventListener("click", tlLoadSearchIndex));
});

/* 3. Queries as a reader of this book types them. "tl.save", "F.softmax" and "nn.Linear" name
 * tensorlib objects by the book's import aliases; Sphinx splits a query into words, so "tl" would
 * have to appear in the object's full name (tensorlib.serialization.save) and the entry was
 * dropped. The aliases become "tensorlib" before the split. */
var splitQuery = (query) =>
  query
    .replace(/(^|[^\w.])(tl|F|nn|optim)\./g, "$1tensorlib.$2.")
    .replace(/tensorlib\.tl\./g, "tensorlib.")
    .replace(/tensorlib\.F\./g, "tensorlib.functional.")
    .split(/[^\p{Letter}\p{Number}_\p{Emoji_Presentation}]+/gu)
    .filter((term) => term);

/* 4. Ranking: the entry an alias names ("tl.save": tensorlib.serialization.nested.save, from
 * _static/tensorlib-aliases.js, written by tools/sphinx_site.py), then other API entries whose
 * name matches, then section titles, then the full text. Sphinx's default gives a full-text hit
 * on a page title (15) the same weight as an object matched by its last name (11 + 5), so "save"
 * listed ten chapter pages before the function. A result is [docname, title, anchor, descr,
 * score, filename]; an object's title is its full name and it has a description. */
let tlQuery = "";
var Scorer = {
  score: (result) => {
    const [docname, title, anchor, descr, score] = result;
    let bonus = 0;
    if (descr) bonus += 30; // an API entry (function, class, method, ...)
    if (descr && docname.startsWith("reference/")) bonus += 10;
    if (!descr && anchor) bonus += 10; // a section title
    const aliases = typeof TL_SEARCH_ALIASES === "undefined" ? {} : TL_SEARCH_ALIASES;
    const named = tlQuery.match(/(?:^|[^\w.])((?:tl|nn|F|optim)\.\w+)/g) || [];
    if (descr && named.some((alias) => aliases[alias.replace(/^[^\w]/, "")] === title)) bonus += 50;
    return score + bonus;
  },
  objNameMatch: 11,
  objPartialMatch: 6,
  objPrio: { 0: 15, 1: 5, 2: -5 },
  objPrioDefault: 0,
  title: 15,
  partialTitle: 7,
  term: 5,
  partialTerm: 2,
};

/* 5. Snippets: the text of a result's page without its formulas' TeX source (a snippet is plain
 * text, so a formula shows as "…"), the download line, the export labels, the navigation and the
 * contents lists. */
document.addEventListener("DOMContentLoaded", () => {
  if (typeof Search === "undefined") return;
  const query = Search.query;
  Search.query = (text) => {
    tlQuery = text;
    return query(text);
  };
  const original = Search.htmlToText;
  Search.htmlToText = (htmlString, anchor) => {
    const page = new DOMParser().parseFromString(htmlString, "text/html");
    page
      .querySelectorAll(".math, p.tl-download, p.tl-export-label, .headerlink, nav, .toctree-wrapper, script, style")
      .forEach((element) => element.replaceWith(element.classList.contains("math") ? " … " : ""));
    const text = original(page.documentElement.outerHTML, anchor);
    return text.replace(/\s+/g, " ");
  };
});
