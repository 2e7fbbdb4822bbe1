/* Triage view: renders the matrix, filters, case list and (on demand) one case view from the embedded JSON.
 * Provider data reaches the page only through textContent and setAttribute on fixed attribute names,
 * never through innerHTML, so a response containing markup shows as text. State lives in the URL hash
 * (#case=<id>&verdict=a,b&scenario=..&frontend=..&backend=..&stream=..&q=..) so every view can be linked. */
(function () {
  "use strict";
  var DATA = JSON.parse(document.getElementById("report-data").textContent);
  var RUN = DATA.run, CASES = DATA.cases, RUNS = DATA.runs, VIEWS = DATA.views;
  var BY_ID = new Map(CASES.map(function (c) { return [c.case_id, c]; }));
  var LABEL = {
    pass: "pass", proxy_bug_request: "proxy bug (request)", proxy_bug_response: "proxy bug (response)",
    backend_issue: "backend issue", baseline_issue: "baseline issue", unsupported: "unsupported",
    harness_error: "harness error"
  };
  // Matrix cells use short labels so that a wide matrix (many backends) still fits; the title has the full one.
  var SHORT = {
    pass: "pass", proxy_bug_request: "request bug", proxy_bug_response: "response bug",
    backend_issue: "backend", baseline_issue: "baseline", unsupported: "unsupported", harness_error: "ERROR"
  };
  var ROLE = { baseline_frontend: "baseline (frontend)", translated: "translated", baseline_backend: "baseline (backend)" };
  var FIELDS = ["scenario", "frontend", "backend", "stream", "q"];
  var state = { caseId: null, verdicts: new Set(RUN.verdicts), scenario: "", frontend: "", backend: "", stream: "", q: "" };

  function el(tag, attrs) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) {
      var v = attrs[k];
      if (v === null || v === undefined || v === false) return;
      if (k === "text") node.textContent = String(v);
      else if (k === "class") node.className = v;
      else if (k === "on") Object.keys(v).forEach(function (e) { node.addEventListener(e, v[e]); });
      else node.setAttribute(k, v === true ? "" : String(v));
    });
    for (var i = 2; i < arguments.length; i++) append(node, arguments[i]);
    return node;
  }
  function append(node, child) {
    if (child === null || child === undefined || child === false) return;
    if (Array.isArray(child)) child.forEach(function (c) { append(node, c); });
    else node.appendChild(typeof child === "string" ? document.createTextNode(child) : child);
  }
  function badge(verdict, text) { return el("span", { class: "badge v-" + verdict, text: text || LABEL[verdict] }); }
  function clear(node) { while (node.firstChild) node.removeChild(node.firstChild); return node; }
  function show(value) { return value === "<missing>" ? value : JSON.stringify(value, null, 2); }

  /* ---- URL hash <-> state ---- */
  function readHash() {
    var params = new URLSearchParams(location.hash.replace(/^#/, ""));
    state.caseId = params.get("case");
    var v = params.get("verdict");
    state.verdicts = new Set(v === null ? RUN.verdicts : v.split(",").filter(function (x) { return x; }));
    FIELDS.forEach(function (f) { state[f] = params.get(f) || ""; });
  }
  function hashText() {
    var params = new URLSearchParams();
    if (state.caseId) params.set("case", state.caseId);
    if (state.verdicts.size !== RUN.verdicts.length) params.set("verdict", Array.from(state.verdicts).join(","));
    FIELDS.forEach(function (f) { if (state[f]) params.set(f, state[f]); });
    return params.toString();
  }
  function filtersChanged() { history.replaceState(null, "", "#" + hashText()); renderMatrix(); renderList(); }
  function openCase(id) { state.caseId = id; location.hash = hashText(); }

  function visible(c) {
    if (!state.verdicts.has(c.verdict)) return false;
    if (state.scenario && c.scenario !== state.scenario) return false;
    if (state.frontend && c.frontend !== state.frontend) return false;
    if (state.backend && c.backend !== state.backend) return false;
    if (state.stream && String(c.stream) !== state.stream) return false;
    return !state.q || c.case_id.toLowerCase().indexOf(state.q.toLowerCase()) >= 0;
  }

  /* ---- header ---- */
  function renderHeader() {
    var facts = document.getElementById("run-facts");
    var failed = RUN.exit_code !== 0, errored = RUN.exit_code === 2;
    var gate = errored ? "ERROR" : (failed ? "FAIL" : "PASS");
    append(facts, [
      el("span", { class: "gate " + (errored ? "error" : (failed ? "fail" : "pass")), text: "gate " + gate }),
      el("span", { text: CASES.length + " cases in " + RUN.duration_s.toFixed(1) + " s" }),
      el("span", { text: "system under test: " + RUN.sut }),
      el("span", {}, RUN.verdicts.filter(function (v) { return RUN.counts[v]; }).map(function (v) {
        return badge(v, RUN.counts[v] + " " + LABEL[v]);
      })),
      RUN.new_proxy_bugs.length ? el("span", { text: RUN.new_proxy_bugs.length + " new proxy bug(s)" }) : null,
      RUN.fixed.length ? el("span", { text: "fixed: " + RUN.fixed.join(", ") }) : null,
      (RUN.deviating || []).length ? el("span", { text: RUN.deviating.length + " case(s) with wire deviations" +
        (RUN.strict ? " (--strict: they fail the gate)" : " (warnings)") }) : null
    ]);
  }

  /* ---- matrix ---- */
  function cellCounts() {
    var cells = {};
    CASES.forEach(function (c) {
      var key = c.frontend + "\u0000" + c.backend;
      cells[key] = cells[key] || {};
      cells[key][c.verdict] = (cells[key][c.verdict] || 0) + 1;
    });
    return cells;
  }
  function renderMatrix() {
    var table = clear(document.getElementById("matrix"));
    var cells = cellCounts();
    append(table, el("thead", {}, el("tr", {}, el("th", { text: "frontend \\ backend" }),
      RUN.backends.map(function (b) { return el("th", { scope: "col", text: b }); }))));
    var body = el("tbody");
    RUN.frontends.forEach(function (f) {
      var row = el("tr", {}, el("th", { scope: "row", text: f }));
      RUN.backends.forEach(function (b) {
        var counts = cells[f + "\u0000" + b] || {};
        var total = RUN.verdicts.reduce(function (n, v) { return n + (counts[v] || 0); }, 0);
        var selected = state.frontend === f && state.backend === b;
        var td = el("td", {
          class: "cell" + (total ? "" : " empty") + (selected ? " selected" : ""),
          "data-frontend": f, "data-backend": b, "data-total": total, title: f + " -> " + b,
          on: { click: function () {
            state.frontend = selected ? "" : f; state.backend = selected ? "" : b; filtersChanged(); syncFilters();
          } }
        });
        RUN.verdicts.forEach(function (v) {
          if (counts[v]) append(td, el("span", { class: "badge v-" + v, "data-verdict": v, "data-count": counts[v],
            title: counts[v] + " " + LABEL[v], text: counts[v] + " " + SHORT[v] }));
        });
        if (!total) td.textContent = "\u2014";
        row.appendChild(td);
      });
      body.appendChild(row);
    });
    table.appendChild(body);
  }

  /* ---- filters ---- */
  function select(name, label, options) {
    return el("label", {}, label + " ", el("select", { name: name, on: { change: function (e) {
      state[name] = e.target.value; filtersChanged();
    } } }, el("option", { value: "", text: "all" }), options.map(function (o) {
      return el("option", { value: o[0], text: o[1] });
    })));
  }
  function pairs(names) { return names.map(function (n) { return [n, n]; }); }
  function buildFilters() {
    var form = document.getElementById("filters");
    form.addEventListener("submit", function (e) { e.preventDefault(); });
    append(form, [
      el("fieldset", {}, el("legend", { text: "verdict" }), RUN.verdicts.map(function (v) {
        return el("label", {}, el("input", { type: "checkbox", name: "verdict", value: v, on: { change: function (e) {
          if (e.target.checked) state.verdicts.add(v); else state.verdicts.delete(v);
          filtersChanged();
        } } }), " ", badge(v, LABEL[v] + " (" + (RUN.counts[v] || 0) + ")"));
      })),
      select("scenario", "scenario", pairs(RUN.scenarios)),
      select("frontend", "frontend", pairs(RUN.frontends)),
      select("backend", "backend", pairs(RUN.backends)),
      select("stream", "stream", [["true", "stream"], ["false", "non-stream"]]),
      el("label", {}, "case id ", el("input", { type: "search", name: "q", placeholder: "contains\u2026",
        on: { input: function (e) { state.q = e.target.value; filtersChanged(); } } })),
      el("button", { type: "button", text: "reset filters", on: { click: function () {
        state.verdicts = new Set(RUN.verdicts);
        FIELDS.forEach(function (f) { state[f] = ""; });
        filtersChanged(); syncFilters();
      } } })
    ]);
  }
  function syncFilters() {
    var form = document.getElementById("filters");
    form.querySelectorAll("input[name=verdict]").forEach(function (box) { box.checked = state.verdicts.has(box.value); });
    FIELDS.forEach(function (f) { form.elements[f].value = state[f]; });
  }

  /* ---- case list ---- */
  function renderList() {
    var table = clear(document.getElementById("cases"));
    var shown = CASES.filter(visible);
    document.getElementById("shown").textContent = "(showing " + shown.length + " of " + CASES.length + ")";
    append(table, el("thead", {}, el("tr", {}, ["verdict", "case", "reason", "first divergence", "ms"].map(function (h) {
      return el("th", { text: h });
    }))));
    var body = el("tbody");
    shown.forEach(function (c) {
      body.appendChild(el("tr", {
        class: c.case_id === state.caseId ? "open" : "", "data-case": c.case_id,
        on: { click: function () { openCase(c.case_id); } }
      }, el("td", {}, badge(c.verdict)),
      el("td", { class: "case" }, el("a", { href: "#case=" + encodeURIComponent(c.case_id), text: c.case_id })),
      el("td", { text: (c.known ? "[known] " : "") + c.reason }),
      el("td", { class: "path", text: c.first_divergence ? c.first_divergence.path : "" }),
      el("td", { text: Math.round(c.duration_ms) })));
    });
    table.appendChild(body);
  }

  /* ---- JSON with a path per line, so diverging lines can be marked ---- */
  function jsonLines(value, path, key, depth, comma, out) {
    var pad = "  ".repeat(depth) + (key === null ? "" : JSON.stringify(key) + ": ");
    var isArr = Array.isArray(value), isObj = value !== null && typeof value === "object";
    if (!isObj) { out.push([pad + JSON.stringify(value) + comma, path]); return out; }
    var keys = isArr ? value.map(function (_, i) { return i; }) : Object.keys(value);
    if (!keys.length) { out.push([pad + (isArr ? "[]" : "{}") + comma, path]); return out; }
    out.push([pad + (isArr ? "[" : "{"), path]);
    keys.forEach(function (k, i) {
      var sub = isArr ? path + "[" + k + "]" : (path ? path + "." + k : String(k));
      jsonLines(value[k], sub, isArr ? null : k, depth + 1, i < keys.length - 1 ? "," : "", out);
    });
    out.push(["  ".repeat(depth) + (isArr ? "]" : "}") + comma, path]);
    return out;
  }
  function under(linePath, divPath) {
    return linePath === divPath || linePath.indexOf(divPath + ".") === 0 || linePath.indexOf(divPath + "[") === 0;
  }
  function jsonBlock(value, root, divs, first) {
    var pre = el("pre", { class: "json" });
    jsonLines(value, root, null, 0, "", []).forEach(function (line) {
      var hit = divs.filter(function (d) { return under(line[1], d.path); });
      var isFirst = first && under(line[1], first.path);
      pre.appendChild(el("span", {
        class: "ln" + (hit.length ? " mark" : "") + (isFirst ? " first" : ""), "data-path": line[1] || null,
        title: hit.length ? hit[0].path + ": " + show(hit[0].left) + " \u2192 " + show(hit[0].right) : null,
        text: line[0]
      }));
    });
    return pre;
  }

  /* ---- case view ---- */
  function firstBox(c) {
    var d = c.first_divergence;
    if (!d) return el("p", { class: "none", text: "no divergence decided this verdict" });
    var request = c.verdict === "proxy_bug_request";
    return el("div", { class: "first-divergence" },
      el("div", {}, "first divergence at ", el("code", { class: "path", text: d.path }),
        d.event_index === null || d.event_index === undefined ? null : " (stream event " + d.event_index + ")",
        d.change ? " \u2014 " + d.change : null),
      el("div", { class: "pair" },
        el("div", {}, el("h4", { text: request ? "client request" : "baseline (frontend)" }), el("pre", { text: show(d.left) })),
        el("div", {}, el("h4", { text: request ? "upstream request" : "translated" }), el("pre", { text: show(d.right) }))));
  }
  function divList(title, divs) {
    if (!divs.length) return null;
    return el("details", { class: "divergences" }, el("summary", { text: divs.length + " " + title }),
      el("ul", {}, divs.map(function (d) {
        return el("li", {}, el("code", { text: d.path }), ": " + show(d.left) + " \u2192 " + show(d.right));
      })));
  }
  function checksTable(checks) {
    if (!checks.length) return el("p", { class: "none", text: "no checks" });
    return el("table", { class: "checks" }, el("tbody", {}, checks.map(function (k) {
      return el("tr", { "data-check": k.name },
        el("td", { class: k.passed ? "ok" : "bad", text: k.passed ? "\u2713 pass" : "\u2717 fail" }),
        el("td", { class: "mono", text: k.name }),
        el("td", { class: "mono", text: "expected " + JSON.stringify(k.expected) }),
        el("td", { class: "mono", text: "actual " + JSON.stringify(k.actual) }));
    })));
  }
  function wireBlock(title, text, chunks) {
    return el("details", {}, el("summary", { text: title + " (" + chunks + " chunk(s), " + text.length + " chars)" }),
      text ? el("pre", { class: "wire", text: text }) : el("p", { class: "none", text: "empty" }));
  }
  function runColumn(c, role) {
    var ref = c.runs[role];
    if (!ref) return el("div", { class: "run " + role }, el("h3", { text: ROLE[role] }), el("p", { class: "none", text: "not run" }));
    var r = RUNS[ref];
    var respDivs = role === "baseline_backend" ? [] : c.response_divergences;
    var reqDivs = role === "translated" ? c.request_divergences : [];
    var first = role === "baseline_backend" ? null : c.first_divergence;
    return el("div", { class: "run " + role, "data-role": role },
      el("h3", {}, ROLE[role] + " ", el("span", { class: "badge s-" + r.status, text: r.status })),
      el("div", { class: "meta", text: r.client + " \u2192 " + r.upstream + " \u00b7 " + r.mode + " \u00b7 " +
        (r.stream ? "stream" : "non-stream") + " \u00b7 " + Math.round(r.timings.total_ms) + " ms" +
        (r.upstream_status === null ? "" : " \u00b7 upstream HTTP " + r.upstream_status) }),
      r.error ? el("p", { class: "error", text: r.error }) : null,
      el("h4", { text: "checks" }), checksTable(r.checks),
      r.grammar.length ? [el("h4", { text: "stream grammar" }), el("ul", {}, r.grammar.map(function (g) {
        return el("li", { class: "mono", text: g });
      }))] : null,
      c.compared[role] ? [el("h4", { text: "SDK saw (as compared)" }), jsonBlock(VIEWS[c.compared[role]], "", respDivs, first)]
        : el("p", { class: "none", text: c.compared_missing || "not compared: the verdict compares baseline (frontend) with translated" }),
      el("details", {}, el("summary", { text: "SDK saw (as delivered" + (r.sdk.exception ? ", raised " + r.sdk.exception : "") + ")" }),
        jsonBlock(r.sdk, "", [], null)),
      el("h4", { text: "upstream request (IR)" }),
      r.upstream_request ? jsonBlock(r.upstream_request, "request", reqDivs, role === "translated" ? first : null)
        : el("p", { class: "none", text: "none" }),
      el("details", { open: reqDivs.length > 0 }, el("summary", { text: "client request (IR)" }),
        r.frontend_request ? jsonBlock(r.frontend_request, "request", reqDivs, null) : el("p", { class: "none", text: "none" })),
      el("h4", { text: "raw wire" + (r.wire.truncated ? " (truncated)" : "") }),
      r.wire.cassette ? el("div", { class: "meta mono", text: r.wire.cassette + " #" + r.wire.interaction }) : null,
      wireBlock("upstream", r.wire.upstream, r.wire.upstream_chunks),
      wireBlock("frontend", r.wire.frontend, r.wire.frontend_chunks));
  }
  function renderCase() {
    var view = document.getElementById("case-view");
    clear(view);
    var c = state.caseId ? BY_ID.get(state.caseId) : null;
    view.hidden = !c;
    if (!state.caseId) return;
    if (!c) { view.hidden = false; append(view, el("p", { class: "none", text: "no case " + state.caseId + " in this run" })); return; }
    append(view, [
      el("div", { class: "title" }, el("h2", { text: c.case_id }), el("button", { type: "button", text: "close",
        on: { click: function () { openCase(null); } } })),
      el("p", { class: "reason" }, badge(c.verdict), " ", el("span", { text: c.reason })),
      c.known ? el("p", { class: "known", text: "known failure: " + c.known }) : null,
      (c.deviations || []).length ? el("div", { class: "deviations" }, el("h4", { text: "wire deviations (warnings)" }),
        el("ul", {}, c.deviations.map(function (d) {
          return el("li", { title: d.source, text: d.rule + ": " + d.message });
        }))) : null,
      firstBox(c),
      divList("request divergence(s): upstream request vs client request", c.request_divergences),
      divList("response divergence(s): translated vs baseline (frontend)", c.response_divergences),
      el("div", { class: "runs" }, ["baseline_frontend", "translated", "baseline_backend"].map(function (role) {
        return runColumn(c, role);
      }))
    ]);
    // Bring the first marked line of each JSON block into view: long event lists would otherwise hide it.
    view.querySelectorAll("pre.json").forEach(function (pre) {
      var hit = pre.querySelector(".ln.first") || pre.querySelector(".ln.mark");
      if (hit) pre.scrollTop = Math.max(0, hit.offsetTop - pre.offsetTop - 60);
    });
  }

  function renderAll() { readHash(); syncFilters(); renderMatrix(); renderCase(); renderList(); }
  renderHeader();
  buildFilters();
  window.addEventListener("hashchange", function () {
    renderAll();
    if (state.caseId) document.getElementById("case-view").scrollIntoView();
  });
  renderAll();
  document.body.setAttribute("data-ready", "true");
})();
