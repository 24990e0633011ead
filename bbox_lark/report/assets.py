"""The page's inline style and script, and the Content-Security-Policy that allows exactly
them (by hash): nothing is loaded from anywhere, no other script can run, and no form or
base URL can send the reader elsewhere."""

from __future__ import annotations

import base64
import hashlib

STYLE = """
:root{--bg:#fbfbfa;--fg:#1d1f21;--dim:#6b7075;--line:#e3e3df;--card:#fff;--ok:#1e7d3a;--err:#b3261e;
--errbg:#fdecea;--pend:#9a6700;--skip:#57606a;--accent:#2f5fb3;
--mono:ui-monospace,SFMono-Regular,Menlo,Consolas,"DejaVu Sans Mono",monospace}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--fg);
font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif}
.bar{position:sticky;top:0;z-index:5;display:flex;flex-wrap:wrap;gap:.5rem 1rem;align-items:center;
padding:.5rem 1rem;background:#24292f;color:#fff}
.bar .brand{font-weight:700}
.bar .what{font-family:var(--mono);opacity:.85;overflow-wrap:anywhere}
.bar input[type=search]{flex:1 1 14rem;min-width:10rem;padding:.3rem .5rem;border-radius:4px;border:0;
font:inherit}
.bar .errs{white-space:nowrap;cursor:pointer}
.bar .errs b{background:var(--err);padding:0 .4rem;border-radius:8px}
main{max-width:80rem;margin:0 auto;padding:1rem}
.secrets-masked{border:2px solid #b00;border-radius:6px;padding:.5rem 1rem;margin:.5rem auto;
max-width:78rem;background:#fff4f4;color:#600}
.secrets-masked ul{margin:.25rem 0 0}
h2{font-size:1.05rem;margin:0 0 .5rem}
h2 small{color:var(--dim);font-weight:400}
.card{background:var(--card);border:1px solid var(--line);border-radius:6px;padding:.75rem 1rem;
margin-bottom:1rem}
.card dl{display:grid;grid-template-columns:repeat(auto-fill,minmax(13rem,1fr));gap:.4rem 1rem;margin:0}
.card dl div{min-width:0}
.card dt{color:var(--dim);font-size:.8rem}
.card dd{margin:0;font-family:var(--mono);font-size:.85rem;overflow-wrap:anywhere}
table{border-collapse:collapse;width:100%;font-size:.85rem}
th,td{text-align:left;padding:.2rem .5rem;border-bottom:1px solid var(--line)}
td:first-child{font-family:var(--mono);overflow-wrap:anywhere}
.num{text-align:right;font-variant-numeric:tabular-nums}
#tools{overflow:auto;max-height:24rem}
.pair{display:grid;grid-template-columns:repeat(auto-fit,minmax(min(24rem,100%),1fr));gap:0 1rem;
align-items:start}
.pair>.card{min-width:0}
svg{width:100%;height:auto;display:block}
svg .out{fill:#9db7e6}
svg a:hover .out{fill:var(--accent)}
svg .in{fill:none;stroke:#c2410c;stroke-width:1.5}
svg .ax{font-size:11px;fill:var(--dim)}
svg .end{text-anchor:end}
ul.found{margin:0;padding-left:1.2rem;max-height:18rem;overflow:auto;font-size:.85rem}
.sev-error{color:var(--err)}
.sev-warning{color:var(--pend)}
.sev-info{color:var(--skip)}
a.code{font-family:var(--mono);font-weight:600}
#timeline{background:var(--card);border:1px solid var(--line);border-radius:6px;padding:.5rem 0}
#timeline h2{padding:0 1rem}
.ch{content-visibility:auto;contain-intrinsic-size:auto 5000px}
.r{display:flex;gap:.5rem;align-items:baseline;padding:1px 1rem 1px 0;font-family:var(--mono);
font-size:12.5px;border-left:3px solid transparent;white-space:pre-wrap;overflow-wrap:anywhere;
min-width:0}
.r>.n{flex:0 0 4.2em;text-align:right;color:var(--dim);text-decoration:none;user-select:none}
.r>.n:hover{color:var(--accent);text-decoration:underline}
.r>.b{flex:1 1 0;min-width:0}
.r,.code-doc{scroll-margin-top:9rem}
.r.here{background:#fff3bf!important;outline:2px solid #f0c000}
.p{color:var(--dim)}
.nm{font-weight:700;color:#6f42c1}
.f{color:#8a9099}
.res{color:var(--fg)}
.k-user{background:#eef4ff;font-family:system-ui,sans-serif;font-size:13.5px}
.k-agent{background:#f3f9f1;font-family:system-ui,sans-serif;font-size:13.5px}
details.th>summary{cursor:pointer;color:var(--dim);display:block;white-space:nowrap;overflow:hidden;
text-overflow:ellipsis;font-style:italic}
details.th>summary::-webkit-details-marker{display:none}
details.th[open]>summary{white-space:pre-wrap;font-style:normal;color:var(--fg)}
.k-comment,.k-header,.blank,.cont{color:var(--dim)}
.k-lifecycle{color:#0b6e75}
.sec{margin-top:.6rem;border-top:2px solid #0b6e75;background:#eef8f8;font-weight:700;padding-top:3px}
.call.o-ok{border-left-color:var(--ok)}
.call.o-error{border-left-color:var(--err);background:var(--errbg)}
.call.o-pending{border-left-color:var(--pend)}
.call.o-skipped,.call.o-retry{border-left-color:var(--skip)}
.join{color:var(--dim);padding-left:1.5rem}
.join.o-error{color:var(--err)}
.back{color:var(--dim);text-decoration:none;font-size:11px;margin-left:.6rem;white-space:nowrap}
.join.o-error .res,td.o-error{color:var(--err);font-weight:600}
code{background:#f0f0ee;padding:0 .2rem;border-radius:3px;font-size:.92em}
.badge{font-size:10.5px;padding:0 .35rem;border-radius:7px;background:#e6e8eb;color:var(--dim);
font-family:system-ui,sans-serif;align-self:center}
.o-error .badge{background:var(--err);color:#fff}
.o-ok .badge{background:#dff3e4;color:var(--ok)}
.o-pending .badge{background:#fff1c2;color:var(--pend)}
.far{font-size:12px;padding-left:1rem}
.far.o-error .res{color:var(--err)}
.gap{color:var(--dim)}
.far.o-ok .res{color:var(--ok)}
.dg{margin:0 1rem 2px 5.2em;padding:1px .5rem;font-size:12px;border-left:3px solid currentColor;
background:#fafafa}
.dg .col{color:var(--dim)}
details.cont>summary,details.hdr>summary{cursor:pointer;margin-left:5.2em;color:var(--accent);
font-size:12px}
details.more>summary{cursor:pointer;color:var(--accent);font-size:11px}
.lane{font-family:var(--mono);padding:0 .4rem;border-left:4px solid}
.lane.ln0{border-left-color:#1f77b4}.lane.ln1{border-left-color:#ff7f0e}.lane.ln2{border-left-color:#2ca02c}
.lane.ln3{border-left-color:#d62728}.lane.ln4{border-left-color:#9467bd}.lane.ln5{border-left-color:#8c564b}
.lane.ln6{border-left-color:#e377c2}.lane.ln7{border-left-color:#7f7f7f}
.r.ln0{box-shadow:-4px 0 0 #1f77b4}.r.ln1{box-shadow:-4px 0 0 #ff7f0e}.r.ln2{box-shadow:-4px 0 0 #2ca02c}
.r.ln3{box-shadow:-4px 0 0 #d62728}.r.ln4{box-shadow:-4px 0 0 #9467bd}.r.ln5{box-shadow:-4px 0 0 #8c564b}
.r.ln6{box-shadow:-4px 0 0 #e377c2}.r.ln7{box-shadow:-4px 0 0 #7f7f7f}
.r.ln0{margin-left:.5rem}.r.ln1{margin-left:.8rem}
.r.ln2{margin-left:1.6rem}
.r.ln3{margin-left:2.4rem}
.r.ln4{margin-left:3.2rem}
.r.ln5{margin-left:4rem}
.r.ln6{margin-left:4.8rem}
.r.ln7{margin-left:5.6rem}
.code-doc h3{font-size:.95rem;margin:.6rem 0 .2rem;font-family:var(--mono)}
.code-doc p{margin:.2rem 0}
.code-doc:target{background:#fff3bf}
pre{background:#f4f4f2;padding:.4rem;overflow-x:auto;font-size:12px}
.note{color:var(--dim);font-size:12px;margin:.2rem 1rem}
.only-err:not(.only-pend) #timeline .r:not(.o-error),.only-pend:not(.only-err) #timeline .r:not(.o-pending),
.only-err.only-pend #timeline .r:not(.o-error):not(.o-pending),.only-err #timeline .dg,.only-err details.cont,
.only-err details.hdr,.only-pend #timeline .dg,.only-pend details.cont,.only-pend details.hdr{display:none}
.ph{display:none}
.bl{display:block;height:0}
body:not(.show-bk) .bk{display:none}
.bar .errs b.pend{background:var(--pend)}
.bar .errs i{font-style:normal;opacity:.8}
.jn{color:var(--dim);margin-top:1px}
.jn>.n{color:var(--dim);text-decoration:none;font-size:11px;margin-right:.3rem}
.jn.o-error .res{color:var(--err);font-weight:600}
.far-o>.b{white-space:nowrap;overflow:hidden;text-overflow:ellipsis;color:var(--dim)}
.badge.amb{background:#fff1c2;color:var(--pend)}
.ww{border-color:#e8b4b0}
.ww .items{display:grid;grid-template-columns:repeat(auto-fill,minmax(min(22rem,100%),1fr));gap:.5rem 1rem}
.ww .it{min-width:0}
.ww h3{font-size:.92rem;margin:.2rem 0 0}
.ww h3 b{display:inline-block;min-width:1.4rem;text-align:center;padding:0 .35rem;border-radius:8px;
background:#e6e8eb;color:var(--dim)}
.ww .it.hot h3 b{background:var(--err);color:#fff}
.ww #ww-loops.hot h3 b{background:#c2410c}
.ww .def{margin:.05rem 0 .2rem;color:var(--dim);font-size:12px}
.ww ul{margin:0;padding-left:1.1rem;font-size:12.5px}
.ww li{overflow-wrap:anywhere}
.ww .snip{font-family:var(--mono);font-size:11.5px;color:var(--err)}
.ww .key{font-family:var(--mono)}
.ww .tok{font-family:var(--mono);font-size:11.5px;color:var(--dim)}
.ww button.find{font-size:11px;padding:0 .4rem;border:1px solid var(--line);border-radius:8px;background:#fff;
cursor:pointer;color:var(--accent)}
.ww .times{font-weight:700;color:#c2410c}
.ww #ww-loops{grid-column:1/-1}
.fine{margin:.2rem 0 0;color:var(--ok)}
.wrong{background:var(--errbg);border-left:4px solid var(--err);padding:.3rem .6rem;margin:.2rem 0 .6rem}
h3.fg{font-size:.85rem;margin:.4rem 0 .2rem}
ul.found.writer{color:var(--dim)}
.searching #timeline .r:not(.hit),.searching #timeline .dg{display:none}
.view-messages #timeline .r:not(.k-user):not(.k-agent),.view-calls #timeline .r:not(.call):not(.join),
.view-findings #timeline .r:not(.has-dg){display:none}
.view-messages #timeline .dg,.view-calls #timeline .dg{display:none}
.view-messages details.cont,.view-calls details.cont,.view-messages details.hdr,.view-calls details.hdr,
.view-messages .note,.view-calls .note,.view-findings .note{display:none}
.view-findings details.cont>summary,.view-findings details.hdr>summary{display:none}
.bar select{padding:.25rem;border-radius:4px;border:0;font:inherit}
.searching details.cont>summary,.only-err details.cont>summary,.only-err .note,.searching .note{display:none}
.r.hit{background:#fff8d6}
#count{font-size:12px}
.live{font-size:12px;background:#1e7d3a;padding:0 .4rem;border-radius:8px}
.live.warn{background:var(--err)}
@media (max-width:40rem){
main{padding:.4rem}
.r>.n{flex-basis:3em}
.far,.dg{margin-left:1rem}
details.cont>summary,details.hdr>summary{margin-left:1rem}
.card dl{grid-template-columns:1fr 1fr}
}
@media print{
.bar{display:none}
.ch{content-visibility:visible}
details::details-content{content-visibility:visible;display:block}
details.th>summary{white-space:pre-wrap}
#tools{max-height:none}
body{background:#fff;font-size:11px}
.card,#timeline{border:0;padding:0}
.r{font-size:10px;break-inside:avoid}
ul.found{max-height:none}
a{color:inherit;text-decoration:none}
}
""".strip()

SCRIPT = """
(function () {
  "use strict";
  var timeline = document.getElementById("timeline");
  var query = document.getElementById("q");
  var count = document.getElementById("count");
  var onlyErrors = document.getElementById("only-errors");
  var hits = [];
  var current = -1;

  function unfold(element) {
    for (var node = element.parentElement; node; node = node.parentElement) {
      if (node.tagName === "DETAILS") { node.open = true; }
    }
  }

  function show(element) {
    unfold(element);
    var old = document.querySelectorAll(".r.here");
    for (var i = 0; i < old.length; i++) { old[i].classList.remove("here"); }
    element.classList.add("here");
    settle(element, 6);
  }

  // Chunks off screen have an estimated height until they are laid out, and scrolling lays
  // out the ones near the target: scroll again over a few frames until the target stays put.
  function settle(element, frames) {
    var before = element.getBoundingClientRect().top;
    element.scrollIntoView({block: "center"});
    if (frames > 0) {
      requestAnimationFrame(function () {
        if (Math.abs(element.getBoundingClientRect().top - before) > 1 || frames > 4) {
          settle(element, frames - 1);
        }
      });
    }
  }

  function followHash() {
    var hash = decodeURIComponent(location.hash || "");
    if (!/^#L[0-9]+$/.test(hash)) { return; }
    var element = document.getElementById(hash.slice(1));
    if (element) { show(element); }
  }

  function search() {
    var text = query.value.trim().toLowerCase();
    var rows = timeline.querySelectorAll(".r");
    hits = [];
    current = -1;
    document.body.classList.toggle("searching", text !== "");
    for (var i = 0; i < rows.length; i++) {
      var row = rows[i];
      var hit = text !== "" && row.textContent.toLowerCase().indexOf(text) !== -1;
      row.classList.toggle("hit", hit);
      if (hit) { hits.push(row); unfold(row); }
    }
    count.textContent = text === "" ? "" : hits.length + (hits.length === 1 ? " line" : " lines");
  }

  var timer = 0;
  query.addEventListener("input", function () {
    clearTimeout(timer);
    timer = setTimeout(search, 120);
  });
  query.addEventListener("keydown", function (event) {
    if (event.key !== "Enter") { return; }
    clearTimeout(timer);
    if (document.body.classList.contains("searching") !== (query.value.trim() !== "")) { search(); }
    if (!hits.length) { search(); }
    if (!hits.length) { return; }
    current = (current + (event.shiftKey ? hits.length - 1 : 1)) % hits.length;
    show(hits[current]);
    count.textContent = (current + 1) + " of " + hits.length;
  });
  var view = document.getElementById("view");
  view.addEventListener("change", function () {
    var names = ["messages", "calls", "findings"];
    for (var i = 0; i < names.length; i++) {
      document.body.classList.toggle("view-" + names[i], view.value === names[i]);
    }
    if (view.value === "findings") {
      var flagged = timeline.querySelectorAll(".r.has-dg");
      for (var j = 0; j < flagged.length; j++) { unfold(flagged[j]); }
    }
  });
  onlyErrors.addEventListener("change", function () {
    document.body.classList.toggle("only-err", onlyErrors.checked);
  });
  // A loop's "show them": its tool's calls, found by the search box (the name is read as text).
  var finders = document.querySelectorAll("button.find");
  for (var f = 0; f < finders.length; f++) {
    finders[f].addEventListener("click", function (event) {
      query.value = event.currentTarget.getAttribute("data-q") || "";
      view.value = "calls";
      view.dispatchEvent(new Event("change"));
      search();
      if (hits.length) { current = 0; show(hits[0]); count.textContent = "1 of " + hits.length; }
    });
  }
  var onlyPending = document.getElementById("only-pending");
  onlyPending.addEventListener("change", function () {
    document.body.classList.toggle("only-pend", onlyPending.checked);
  });
  var showBk = document.getElementById("show-bk");
  if (showBk) {
    showBk.addEventListener("change", function () {
      document.body.classList.toggle("show-bk", showBk.checked);
    });
  }
  window.addEventListener("hashchange", followHash);
  window.addEventListener("beforeprint", function () {
    var folds = document.querySelectorAll("details");
    for (var i = 0; i < folds.length; i++) { folds[i].open = true; }
  });
  followHash();
  // The browser scrolls to the fragment itself once the page has loaded: centre it again.
  window.addEventListener("load", followHash);

  // report --watch: ask the server for its version; when it changed, fetch the new page and
  // put its <main> in place of this one (the page is the server's, escaped as on disk; the
  // toolbar, its filters and the search stay). The server's message is shown as text.
  if (!document.body.dataset.live) { return; }
  var message = document.getElementById("live-msg");
  var version = null;
  var busy = false;
  function swap(text) {
    var fresh = new DOMParser().parseFromString(text, "text/html");
    var main = fresh.querySelector("main");
    if (!main) { return; }
    var last = lastRow();
    var atEnd = !!last && last.getBoundingClientRect().top < window.innerHeight;
    var y = window.scrollY;
    document.querySelector("main").replaceWith(document.adoptNode(main));
    timeline = document.getElementById("timeline");
    var ids = ["error-count", "pending-count"];
    for (var i = 0; i < ids.length; i++) {
      var was = document.getElementById(ids[i]), now = fresh.getElementById(ids[i]);
      if (was && now) { was.textContent = now.textContent; }
    }
    if (query.value.trim() !== "") { search(); }
    var end = atEnd ? lastRow() : null;
    if (end) { end.scrollIntoView({block: "end"}); } else { window.scrollTo(0, y); }
  }
  // The timeline's last line: when it was on screen, the newest line is kept on screen.
  function lastRow() {
    var rows = timeline.querySelectorAll(".r");
    return rows.length ? rows[rows.length - 1] : null;
  }
  function poll() {
    if (busy) { return; }
    busy = true;
    fetch("version", {cache: "no-store"}).then(function (r) { return r.json(); }).then(function (state) {
      message.textContent = state.message ? "live: " + state.message : "live: " + state.lines + " lines";
      message.classList.toggle("warn", !!state.message);
      if (state.version === version) { busy = false; return; }
      return fetch("page", {cache: "no-store"}).then(function (r) { return r.text(); }).then(function (text) {
        if (version !== null) { swap(text); }
        version = state.version;
        busy = false;
      });
    }).catch(function () {
      message.textContent = "live: the server does not answer";
      message.classList.add("warn");
      busy = false;
    });
  }
  poll();
  setInterval(poll, 1000);
})();
""".strip()


def _hash(text: str) -> str:
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return "'sha256-" + base64.b64encode(digest).decode("ascii") + "'"


#: No network, no plugin, no form target, no base URL: only the page's own style and script.
CSP = (
    f"default-src 'none'; script-src {_hash(SCRIPT)}; style-src {_hash(STYLE)}; img-src data:; "
    "base-uri 'none'; form-action 'none'; object-src 'none'"
)

#: The page of ``report --watch``: the same, and it may ask its own server for updates.
CSP_LIVE = CSP + "; connect-src 'self'"

INDEX_STYLE = """
:root{--bg:#fbfbfa;--fg:#1d1f21;--dim:#6b7075;--line:#e3e3df;--err:#b3261e;--pend:#9a6700;
--mono:ui-monospace,SFMono-Regular,Menlo,Consolas,"DejaVu Sans Mono",monospace}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--fg);font:14px/1.45 system-ui,sans-serif}
.bar{position:sticky;top:0;display:flex;flex-wrap:wrap;gap:.5rem 1rem;align-items:center;padding:.5rem 1rem;
background:#24292f;color:#fff;z-index:2}
.bar b{font-weight:700}
.bar input{flex:1 1 14rem;padding:.3rem .5rem;border:0;border-radius:4px;font:inherit}
main{padding:1rem}
.totals{display:flex;flex-wrap:wrap;gap:.3rem 1.5rem;margin:0 0 .8rem;font-size:.9rem}
.totals b{font-variant-numeric:tabular-nums}
table{border-collapse:collapse;width:100%;font-size:.85rem;background:#fff}
th,td{text-align:left;padding:.25rem .5rem;border-bottom:1px solid var(--line);vertical-align:top}
th{position:sticky;top:2.6rem;background:#f0f0ee;cursor:pointer;user-select:none;white-space:nowrap}
th[aria-sort=ascending]::after{content:" ▲"}
th[aria-sort=descending]::after{content:" ▼"}
td.s{font-family:var(--mono);overflow-wrap:anywhere;max-width:28rem}
td.t{font-family:var(--mono);font-size:.8rem}
td.d{white-space:nowrap;font-variant-numeric:tabular-nums}
td.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
td.bad{color:var(--err);font-weight:700}
td.loop{color:#c2410c;font-weight:700}
tr.problem td{color:var(--err)}
tr.hide{display:none}
#shown{font-size:12px}
""".strip()

INDEX_SCRIPT = """
(function () {
  "use strict";
  var table = document.getElementById("sessions");
  var body = table.tBodies[0];
  var filter = document.getElementById("filter");
  var shown = document.getElementById("shown");
  var heads = table.tHead.rows[0].cells;
  function value(row, index, numeric) {
    var cell = row.cells[index];
    var text = cell.getAttribute("data-v");
    if (text === null) { text = cell.textContent; }
    if (numeric) { var n = parseFloat(text); return isNaN(n) ? -Infinity : n; }
    return text.toLowerCase();
  }
  function sortBy(index) {
    var head = heads[index];
    var numeric = head.getAttribute("data-num") !== null;
    var down = head.getAttribute("aria-sort") !== "descending";
    for (var i = 0; i < heads.length; i++) { heads[i].removeAttribute("aria-sort"); }
    head.setAttribute("aria-sort", down ? "descending" : "ascending");
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var x = value(a, index, numeric), y = value(b, index, numeric);
      var order = x < y ? -1 : x > y ? 1 : 0;
      return down ? -order : order;
    });
    for (var j = 0; j < rows.length; j++) { body.appendChild(rows[j]); }
  }
  for (var i = 0; i < heads.length; i++) {
    (function (index) { heads[index].addEventListener("click", function () { sortBy(index); }); })(i);
  }
  function apply() {
    var text = filter.value.trim().toLowerCase();
    var count = 0;
    for (var i = 0; i < body.rows.length; i++) {
      var row = body.rows[i];
      var hit = text === "" || row.textContent.toLowerCase().indexOf(text) !== -1;
      row.classList.toggle("hide", !hit);
      if (hit) { count++; }
    }
    shown.textContent = count + " of " + body.rows.length + " sessions";
  }
  filter.addEventListener("input", apply);
  apply();
})();
""".strip()

#: The index of ``report PATH... -o DIR``: its own style and script, links to the pages beside it.
CSP_INDEX = (
    f"default-src 'none'; script-src {_hash(INDEX_SCRIPT)}; style-src {_hash(INDEX_STYLE)}; "
    "img-src data:; base-uri 'none'; form-action 'none'; object-src 'none'"
)
