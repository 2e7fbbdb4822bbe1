/* Triage view: the run's facts, the matrix, the charts, the filters and the case list render from the embedded
 * index at load; a case's details are decoded from its pack when it is opened. State lives in the URL hash
 * (#case=<id>&verdict=a,b&scenario=..&frontend=..&backend=..&stream=..&q=..&view=groups|list&sort=..&open=<group>)
 * so every view can be linked. */
(function () {
  "use strict";
  var el = RV.el, svg = RV.svg, clear = RV.clear, show = RV.show;
  var DATA = JSON.parse(document.getElementById("report-data").textContent);
  var RUN = DATA.run, S = DATA.strings;
  RV.setWhys(DATA.why);
  var VERDICTS = DATA.verdicts.map(function (v) { return v.id; });
  var VINFO = {};
  DATA.verdicts.forEach(function (v) { VINFO[v.id] = v; });
  var GROUPS = DATA.groups.map(function (g, i) {
    return { index: i, id: g[0], verdict: VERDICTS[g[1]], path: g[2], reason: S[g[3]], count: g[4], title: S[g[5]] };
  });
  var CASES = DATA.cases.map(function (r, i) {
    return { order: i, id: r[0], scenario: DATA.scenarios[r[1]], frontend: DATA.frontends[r[2]], backend: DATA.backends[r[3]],
      stream: r[4] === 1, verdict: VERDICTS[r[5]], reason: S[r[6]], path: r[7] < 0 ? null : S[r[7]],
      groups: r[8].map(function (g) { return GROUPS[g]; }),
      known: r[9] < 0 ? null : S[r[9]], isNew: r[10] === 1, ms: r[11], pack: r[12] };
  });
  var BY_ID = new Map(CASES.map(function (c) { return [c.id, c]; }));
  var DESCRIPTION = {};
  DATA.scenarios.forEach(function (s, i) { DESCRIPTION[s] = DATA.descriptions[i]; });
  var ROLE = { baseline_frontend: "baseline (frontend)", translated: "translated", baseline_backend: "baseline (backend)" };
  var FIELDS = ["scenario", "frontend", "backend", "stream", "q", "view", "sort", "open"];
  var DEFAULTS = { view: "groups", sort: "plan" };
  var LIMIT = 300;
  var state = { caseId: null, verdicts: new Set(VERDICTS), limit: LIMIT };
  var packs = {};

  function color(verdict) { return (VINFO[verdict] || { color: "#37474f" }).color; }
  function label(verdict) { return (VINFO[verdict] || { label: verdict }).label; }
  function badge(verdict, text) {
    return el("span", { "class": "badge", "data-verdict": verdict, style: "background:" + color(verdict), text: text || label(verdict) });
  }

  /* ---- URL hash <-> state ---- */
  function readHash() {
    var params = new URLSearchParams(location.hash.replace(/^#/, ""));
    state.caseId = params.get("case");
    var v = params.get("verdict");
    state.verdicts = new Set(v === null ? VERDICTS : v.split(",").filter(function (x) { return x; }));
    FIELDS.forEach(function (f) { state[f] = params.get(f) || DEFAULTS[f] || ""; });
  }
  function hashText() {
    var params = new URLSearchParams();
    if (state.caseId) params.set("case", state.caseId);
    if (state.verdicts.size !== VERDICTS.length) params.set("verdict", Array.from(state.verdicts).join(","));
    FIELDS.forEach(function (f) { if (state[f] && state[f] !== DEFAULTS[f]) params.set(f, state[f]); });
    return params.toString();
  }
  function filtersChanged() { state.limit = LIMIT; history.replaceState(null, "", "#" + hashText()); renderMatrix(); renderList(); }
  function openCase(id) { state.caseId = id; location.hash = hashText(); }

  function visible(c) {
    if (!state.verdicts.has(c.verdict)) return false;
    if (state.scenario && c.scenario !== state.scenario) return false;
    if (state.frontend && c.frontend !== state.frontend) return false;
    if (state.backend && c.backend !== state.backend) return false;
    if (state.stream && String(c.stream) !== state.stream) return false;
    return !state.q || c.id.toLowerCase().indexOf(state.q.toLowerCase()) >= 0;
  }
  function tally(cases) {
    var out = {};
    cases.forEach(function (c) { out[c.verdict] = (out[c.verdict] || 0) + 1; });
    return out;
  }

  /* ---- header ---- */
  function renderHeader() {
    var counts = tally(CASES), failed = RUN.exit_code !== 0, errored = RUN.exit_code === 2;
    var gate = errored ? "ERROR" : (failed ? "FAIL" : "PASS");
    append("run-facts", [
      el("span", { "class": "gate " + (errored ? "error" : (failed ? "fail" : "pass")), text: "gate " + gate + " (exit " + RUN.exit_code + ")" }),
      el("span", { text: CASES.length + " cases in " + RUN.duration_s.toFixed(1) + " s" }),
      el("span", { text: "system under test: " + RUN.sut }),
      el("span", {}, VERDICTS.filter(function (v) { return counts[v]; }).map(function (v) { return badge(v, counts[v] + " " + label(v)); })),
      RUN.new_proxy_bugs ? el("span", { text: RUN.new_proxy_bugs + " new proxy bug(s)" }) : null,
      RUN.fixed.length ? el("span", { text: "fixed: " + RUN.fixed.join(", ") }) : null,
      (RUN.deviating || []).length ? el("span", { text: RUN.deviating.length + " case(s) with wire deviations" +
        (RUN.strict ? " (--strict: they fail the gate)" : " (warnings)") }) : null
    ]);
  }
  function append(id, children) { var node = document.getElementById(id); children.forEach(function (c) { if (c) node.appendChild(c); }); return node; }

  /* ---- matrix: backends down, frontends across, so 24 backends fit ---- */
  function cellCases() {
    var cells = {};
    CASES.forEach(function (c) { var k = c.backend + "\u0000" + c.frontend; (cells[k] = cells[k] || []).push(c); });
    return cells;
  }
  var CELLS = cellCases();
  function stackBar(counts, total) {
    return el("div", { "class": "stack" }, VERDICTS.filter(function (v) { return counts[v]; }).map(function (v) {
      return el("span", { style: "width:" + (100 * counts[v] / total).toFixed(2) + "%;background:" + color(v), title: counts[v] + " " + label(v) });
    }));
  }
  function renderMatrix() {
    var table = clear(document.getElementById("matrix"));
    table.appendChild(el("thead", {}, el("tr", {}, el("th", { text: "backend \\ frontend" }),
      DATA.frontends.map(function (f) { return el("th", { scope: "col", text: f }); }))));
    var body = el("tbody");
    DATA.backends.forEach(function (b) {
      var row = el("tr", {}, el("th", { scope: "row", text: b }));
      DATA.frontends.forEach(function (f) {
        var cases = CELLS[b + "\u0000" + f] || [], counts = tally(cases), selected = state.frontend === f && state.backend === b;
        var problems = VERDICTS.filter(function (v) { return v !== "pass" && v !== "unsupported" && counts[v]; });
        var td = el("td", { "class": "cell" + (cases.length ? "" : " empty") + (selected ? " selected" : ""),
          "data-frontend": f, "data-backend": b, "data-total": cases.length, title: f + " \u2192 " + b,
          on: { click: function () {
            state.frontend = selected ? "" : f; state.backend = selected ? "" : b; filtersChanged(); syncFilters();
          } } });
        if (!cases.length) td.textContent = "\u2014";
        else append0(td, [stackBar(counts, cases.length), el("span", { "class": "count", text: (counts.pass || 0) + "/" + cases.length }),
          problems.map(function (v) { return badge(v, counts[v] + " " + VINFO[v].short); })]);
        row.appendChild(td);
      });
      body.appendChild(row);
    });
    table.appendChild(body);
  }
  function append0(node, children) { children.forEach(function (c) { if (Array.isArray(c)) append0(node, c); else if (c) node.appendChild(c); }); }

  /* ---- charts ---- */
  function verdictChart() {
    var W = 520, left = 130, barH = 14, gap = 4, width = W - left - 60;
    var rows = DATA.backends.map(function (b) { return [b, tally(CASES.filter(function (c) { return c.backend === b; }))]; });
    var max = Math.max.apply(null, rows.map(function (r) { return VERDICTS.reduce(function (n, v) { return n + (r[1][v] || 0); }, 0); }).concat([1]));
    var chart = svg("svg", { id: "verdicts-chart", viewBox: "0 0 " + W + " " + (rows.length * (barH + gap) + 8), width: W,
      height: rows.length * (barH + gap) + 8, role: "img" }, svg("title", { text: "verdicts per backend" }));
    rows.forEach(function (r, i) {
      var y = 4 + i * (barH + gap), x = left, total = 0;
      chart.appendChild(svg("text", { x: left - 6, y: y + barH - 3, "text-anchor": "end", "class": "lane", text: r[0] }));
      VERDICTS.forEach(function (v) {
        var n = r[1][v] || 0; if (!n) return;
        var w = width * n / max;
        chart.appendChild(svg("rect", { x: x, y: y, width: w, height: barH, fill: color(v), "data-backend": r[0], "data-verdict": v, "data-count": n },
          svg("title", { text: r[0] + ": " + n + " " + label(v) })));
        x += w; total += n;
      });
      chart.appendChild(svg("text", { x: x + 4, y: y + barH - 3, "class": "lane", text: String(total) }));
    });
    var legend = el("div", { "class": "legend" }, VERDICTS.filter(function (v) { return CASES.some(function (c) { return c.verdict === v; }); })
      .map(function (v) { return badge(v); }));
    return [chart, legend];
  }
  function tokenChart() {
    var cells = {}, values = [];
    DATA.first_tokens.forEach(function (t) { cells[t[1] + "\u0000" + t[0]] = t; if (t[2] !== null) values.push(t[2]); });
    if (!values.length) return el("p", { "class": "none", text: "no streamed cases with timings" });
    var max = Math.max.apply(null, values), min = Math.min.apply(null, values);
    var table = el("table", { id: "ttft", "class": "heat" }, el("thead", {}, el("tr", {}, el("th", { text: "backend \\ frontend" }),
      DATA.frontends.map(function (f) { return el("th", { text: f }); }))));
    var body = el("tbody");
    DATA.backends.forEach(function (b) {
      body.appendChild(el("tr", {}, el("th", { text: b }), DATA.frontends.map(function (f) {
        var t = cells[b + "\u0000" + f];
        if (!t || t[2] === null) return el("td", { "class": "empty", text: "\u2014" });
        var share = max > min ? (t[2] - min) / (max - min) : 0;
        return el("td", { "data-frontend": f, "data-backend": b, "data-ms": t[2],
          style: "background:hsl(" + Math.round(120 - 120 * share) + ",70%,85%)",
          title: f + " \u2192 " + b + ": median " + RV.ms(t[2]) + " translated, " + RV.ms(t[3]) + " its frontend baseline (" + t[4] + " streamed case(s))",
          text: t[2].toFixed(1) });
      })));
    });
    table.appendChild(body);
    return [table, el("p", { "class": "meta", text: "median time to first token at the client, ms (translated runs of streamed cases; first byte where a trace has no chunk times)" })];
  }
  function renderCharts() {
    append0(document.getElementById("chart-verdicts"), verdictChart());
    append0(document.getElementById("chart-ttft"), [tokenChart()]);
  }

  /* ---- filters ---- */
  function select(name, text, options) {
    return el("label", {}, text + " ", el("select", { name: name, on: { change: function (e) { state[name] = e.target.value; filtersChanged(); } } },
      options.map(function (o) { return el("option", { value: o[0], text: o[1] }); })));
  }
  function pairs(names) { return [["", "all"]].concat(names.map(function (n) { return [n, n]; })); }
  function buildFilters() {
    var form = document.getElementById("filters"), counts = tally(CASES);
    form.addEventListener("submit", function (e) { e.preventDefault(); });
    append0(form, [
      el("fieldset", {}, el("legend", { text: "verdict" }), VERDICTS.map(function (v) {
        return el("label", {}, el("input", { type: "checkbox", name: "verdict", value: v, on: { change: function (e) {
          if (e.target.checked) state.verdicts.add(v); else state.verdicts.delete(v);
          filtersChanged();
        } } }), " ", badge(v, label(v) + " (" + (counts[v] || 0) + ")"));
      })),
      select("scenario", "scenario", pairs(DATA.scenarios)),
      select("frontend", "frontend", pairs(DATA.frontends)),
      select("backend", "backend", pairs(DATA.backends)),
      select("stream", "stream", [["", "all"], ["true", "stream"], ["false", "non-stream"]]),
      el("label", {}, "case id ", el("input", { type: "search", name: "q", placeholder: "contains\u2026",
        on: { input: function (e) { state.q = e.target.value; filtersChanged(); } } })),
      select("view", "show", [["groups", "grouped by root cause"], ["list", "one row per case"]]),
      select("sort", "sort", [["plan", "run order"], ["divergence", "first divergence"], ["verdict", "verdict"], ["slowest", "slowest first"]]),
      el("button", { type: "button", text: "reset filters", on: { click: function () {
        state.verdicts = new Set(VERDICTS);
        FIELDS.forEach(function (f) { state[f] = DEFAULTS[f] || ""; });
        filtersChanged(); syncFilters();
      } } })
    ]);
  }
  function syncFilters() {
    var form = document.getElementById("filters");
    form.querySelectorAll("input[name=verdict]").forEach(function (box) { box.checked = state.verdicts.has(box.value); });
    ["scenario", "frontend", "backend", "stream", "q", "view", "sort"].forEach(function (f) { form.elements[f].value = state[f]; });
  }

  /* ---- case list: grouped by (verdict, root cause), a case under each of its causes, or one row per case ---- */
  var VORDER = {};
  VERDICTS.forEach(function (v, i) { VORDER[v] = i; });
  var SORTS = {
    plan: function (a, b) { return a.order - b.order; },
    divergence: function (a, b) { return (a.path || "\uffff").localeCompare(b.path || "\uffff") || a.order - b.order; },
    verdict: function (a, b) { return VORDER[a.verdict] - VORDER[b.verdict] || a.order - b.order; },
    slowest: function (a, b) { return b.ms - a.ms || a.order - b.order; }
  };
  function caseRows(cases) {
    var sorted = cases.slice().sort(SORTS[state.sort] || SORTS.plan);
    var body = el("tbody");
    sorted.slice(0, state.limit).forEach(function (c) {
      body.appendChild(el("tr", { "class": c.id === state.caseId ? "open" : "", "data-case": c.id, on: { click: function () { openCase(c.id); } } },
        el("td", {}, badge(c.verdict)),
        el("td", { "class": "case" }, el("a", { href: "#case=" + encodeURIComponent(c.id), text: c.id })),
        el("td", { text: (c.known ? "[known] " : "") + c.reason }),
        el("td", { "class": "path", text: c.path || "" }),
        el("td", { "class": "num", text: c.ms })));
    });
    var table = el("table", { "class": "cases" }, el("thead", {}, el("tr", {}, ["verdict", "case", "reason", "first divergence", "ms"].map(function (h) {
      return el("th", { text: h });
    }))), body);
    var more = sorted.length > state.limit ? el("button", { type: "button", "class": "more", text: "show " + Math.min(sorted.length - state.limit, 2000) + " more of " + (sorted.length - state.limit),
      on: { click: function () { state.limit += 2000; renderList(); } } }) : null;
    return [table, more];
  }
  function renderGroups(shown) {
    var byGroup = new Map();
    shown.forEach(function (c) {
      c.groups.forEach(function (g) { var list = byGroup.get(g) || []; list.push(c); byGroup.set(g, list); });
    });
    return GROUPS.filter(function (g) { return byGroup.has(g); }).map(function (g) {
      var cases = byGroup.get(g), isOpen = state.open === g.id;
      var box = el("details", { "class": "group", "data-group": g.id, open: isOpen },
        el("summary", {}, badge(g.verdict), el("span", { "class": "group-count", text: cases.length + (cases.length === g.count ? "" : " of " + g.count) + " \u00d7" }),
          el("span", { "class": "group-title", text: g.title }),
          g.reason === g.title ? null : el("span", { "class": "group-reason", text: g.reason })));
      box.addEventListener("toggle", function () {
        if (box.open && !box.querySelector("table")) append0(box, caseRows(cases));
        if (box.open !== (state.open === g.id)) { state.open = box.open ? g.id : ""; history.replaceState(null, "", "#" + hashText()); }
      });
      if (isOpen) append0(box, caseRows(cases));
      return box;
    });
  }
  function renderList() {
    var holder = clear(document.getElementById("cases"));
    var shown = CASES.filter(visible);
    document.getElementById("shown").textContent = "(showing " + shown.length + " of " + CASES.length + ")";
    append0(holder, state.view === "list" ? caseRows(shown) : renderGroups(shown));
  }

  /* ---- case view ---- */
  function firstBox(c) {
    var d = c.first_divergence;
    if (!d) return el("p", { "class": "none", text: "no divergence decided this verdict" });
    var request = c.verdict === "proxy_bug_request";
    return el("div", { "class": "first-divergence" },
      el("div", {}, "first divergence at ", el("code", { "class": "path", text: d.path }),
        d.event_index === null || d.event_index === undefined ? null : " (stream event " + d.event_index + ")", d.change ? " \u2014 " + d.change : null),
      el("div", { "class": "pair" },
        el("div", {}, el("h4", { text: request ? "client request" : "baseline (frontend)" }), el("pre", { text: show(d.left) })),
        el("div", {}, el("h4", { text: request ? "upstream request" : "translated" }), el("pre", { text: show(d.right) }))));
  }
  function divList(title, divs) {
    if (!divs.length) return null;
    return el("details", { "class": "divergences" }, el("summary", { text: divs.length + " " + title }),
      el("ul", {}, divs.map(function (d) { return el("li", {}, el("code", { text: d.path }), ": " + show(d.left) + " \u2192 " + show(d.right)); })));
  }
  function command(label_, text) {
    var code = el("code", { text: text });
    return el("div", { "class": "command" }, el("span", { "class": "k", text: label_ }), code,
      el("button", { type: "button", text: "select", on: { click: function () {
        var range = document.createRange(); range.selectNodeContents(code);
        var sel = window.getSelection(); sel.removeAllRanges(); sel.addRange(range);
      } } }));
  }
  function runColumn(c, pack, role) {
    var ref = c.runs[role];
    if (!ref) return el("div", { "class": "run " + role, "data-role": role }, el("h3", { text: ROLE[role] }), el("p", { "class": "none", text: "not run" }));
    var r = pack.runs[ref];
    var respDivs = role === "baseline_backend" ? [] : c.response_divergences;
    var reqDivs = role === "translated" ? c.request_divergences : [];
    var first = role === "baseline_backend" ? null : c.first_divergence;
    var w = r.wire;
    return el("div", { "class": "run " + role, "data-role": role },
      el("h3", {}, ROLE[role] + " ", el("span", { "class": "badge s-" + r.status, text: r.status })),
      el("div", { "class": "meta", text: r.client + " \u2192 " + r.upstream + " \u00b7 " + r.mode + " \u00b7 " + (r.stream ? "stream" : "non-stream") +
        " \u00b7 " + Math.round(r.timings.total_ms) + " ms" + (r.upstream_status === null ? "" : " \u00b7 upstream HTTP " + r.upstream_status) }),
      r.error ? el("p", { "class": "error", text: r.error }) : null,
      el("h4", { text: "checks" }), RV.checksList(r.checks),
      r.grammar.length ? [el("h4", { text: "stream grammar" }), el("ul", {}, r.grammar.map(function (g) { return el("li", { "class": "mono", text: g }); }))] : null,
      c.compared[role] ? [el("h4", { text: "SDK saw (as compared)" }), RV.jsonBlock(pack.views[c.compared[role]], "", respDivs, first)]
        : el("p", { "class": "none", text: c.compared_missing || "not compared: the verdict compares baseline (frontend) with translated" }),
      el("details", {}, el("summary", { text: "SDK saw (as delivered" + (r.sdk.exception ? ", raised " + r.sdk.exception : "") + ")" }), RV.jsonBlock(r.sdk, "", [], null)),
      el("h4", { text: "upstream request (IR)" }),
      r.upstream_request ? RV.jsonBlock(r.upstream_request, "request", reqDivs, role === "translated" ? first : null) : el("p", { "class": "none", text: "none" }),
      el("details", { open: reqDivs.length > 0 }, el("summary", { text: "client request (IR)" }),
        r.frontend_request ? RV.jsonBlock(r.frontend_request, "request", reqDivs, null) : el("p", { "class": "none", text: "none" })),
      el("h4", { text: "raw wire" + (w.truncated ? " (truncated)" : "") }),
      w.cassette ? el("div", { "class": "meta mono", text: w.cassette + " #" + w.interaction }) : null,
      RV.wireChunks("upstream", w.upstream, w.upstream_offsets, w.upstream_times_ms, w.upstream_chunks),
      RV.wireChunks("to the client", w.frontend, w.frontend_offsets, w.frontend_times_ms, w.frontend_chunks));
  }
  function timelinesOf(c, pack) {
    var out = {};
    Object.keys(c.timelines || {}).forEach(function (role) { out[role] = pack.timelines[c.timelines[role]]; });
    return out;
  }
  function caseBody(entry, c, pack) {
    return [
      el("p", { "class": "reason" }, badge(c.verdict), " ", el("span", { text: c.reason })),
      c.known ? el("p", { "class": "known", text: "known failure: " + c.known }) : null,
      (c.deviations || []).length ? el("div", { "class": "deviations" }, el("h4", { text: "wire deviations" + (RUN.strict ? " (--strict: they fail the gate)" : " (warnings)") }),
        el("ul", {}, c.deviations.map(function (d) { return el("li", { title: d.source, text: d.rule + ": " + d.message }); }))) : null,
      el("p", { "class": "scenario" }, el("strong", { text: c.scenario + ": " }), el("span", { text: DESCRIPTION[c.scenario] || "(no description)" })),
      command("rerun", c.commands.rerun), c.commands.diff ? command("diff", c.commands.diff) : null,
      firstBox(c),
      c.event_diff ? [el("h3", { text: "event diff" }), RV.eventDiff(c.event_diff)] : null,
      el("h3", { text: "stream timeline" }), RV.timeline(timelinesOf(c, pack), ["baseline_frontend", "translated"], ROLE),
      divList("request divergence(s): upstream request vs client request", c.request_divergences),
      divList("response divergence(s): translated vs baseline (frontend)", c.response_divergences),
      el("div", { "class": "runs" }, ["baseline_frontend", "translated", "baseline_backend"].map(function (role) { return runColumn(c, pack, role); }))
    ];
  }
  function loadPack(number) {
    if (!packs[number]) packs[number] = RV.decodePack(document.getElementById("pack-" + number).textContent);
    return packs[number];
  }
  function renderCase() {
    var view = clear(document.getElementById("case-view"));
    view.removeAttribute("data-loaded");
    var entry = state.caseId ? BY_ID.get(state.caseId) : null;
    view.hidden = !state.caseId;
    if (!state.caseId) return Promise.resolve();
    if (!entry) { view.appendChild(el("p", { "class": "none", text: "no case " + state.caseId + " in this run" })); return Promise.resolve(); }
    append0(view, [el("div", { "class": "title" }, el("h2", { text: entry.id }),
      el("button", { type: "button", text: "close", on: { click: function () { openCase(null); } } })),
      el("p", { "class": "loading", text: "loading\u2026" })]);
    var wanted = entry.id;
    return loadPack(entry.pack).then(function (pack) {
      if (state.caseId !== wanted) return;
      var loading = view.querySelector(".loading");
      if (loading) view.removeChild(loading);
      append0(view, caseBody(entry, pack.cases[entry.id], pack));
      view.setAttribute("data-loaded", entry.id);
      view.querySelectorAll("pre.json").forEach(function (pre) {
        var hit = pre.querySelector(".ln.first") || pre.querySelector(".ln.mark");
        if (hit) pre.scrollTop = Math.max(0, hit.offsetTop - pre.offsetTop - 60);
      });
    }, function (error) {
      view.appendChild(el("p", { "class": "error", text: "cannot decode this case's details: " + error }));
    });
  }

  function renderAll() { readHash(); syncFilters(); renderMatrix(); renderList(); return renderCase(); }
  renderHeader();
  renderCharts();
  buildFilters();
  window.addEventListener("hashchange", function () {
    renderAll().then(function () { if (state.caseId) document.getElementById("case-view").scrollIntoView(); });
  });
  renderAll();
  document.body.setAttribute("data-ready-ms", performance.now().toFixed(1));
  document.body.setAttribute("data-ready", "true");
})();
