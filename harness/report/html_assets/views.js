/* Building blocks of the triage view: DOM and SVG helpers, the pack decoder, and the parts of a case view
 * (JSON with marked paths, checks, raw wire by chunk, the aligned event diff, the stream timeline).
 * Provider data reaches the page only through textContent and setAttribute on fixed attribute names, never
 * through innerHTML, so a response containing markup shows as text. */
var RV = (function () {
  "use strict";
  var SVG_NS = "http://www.w3.org/2000/svg";

  function append(node, child) {
    if (child === null || child === undefined || child === false) return;
    if (Array.isArray(child)) child.forEach(function (c) { append(node, c); });
    else node.appendChild(typeof child === "string" ? document.createTextNode(child) : child);
  }
  function build(node, attrs, children) {
    Object.keys(attrs || {}).forEach(function (k) {
      var v = attrs[k];
      if (v === null || v === undefined || v === false) return;
      if (k === "text") node.textContent = String(v);
      else if (k === "on") Object.keys(v).forEach(function (e) { node.addEventListener(e, v[e]); });
      else node.setAttribute(k === "className" ? "class" : k, v === true ? "" : String(v));
    });
    for (var i = 0; i < children.length; i++) append(node, children[i]);
    return node;
  }
  function el(tag, attrs) {
    return build(document.createElement(tag), attrs, Array.prototype.slice.call(arguments, 2));
  }
  function svg(tag, attrs) {
    return build(document.createElementNS(SVG_NS, tag), attrs, Array.prototype.slice.call(arguments, 2));
  }
  function clear(node) { while (node.firstChild) node.removeChild(node.firstChild); return node; }
  function show(value) { return value === "<missing>" ? value : JSON.stringify(value, null, 2); }
  function ms(value) { return value === null || value === undefined ? "\u2014" : (value < 10 ? value.toFixed(2) : value.toFixed(1)) + " ms"; }

  /* A pack: base64 of gzip of JSON, decoded in the browser (no fetch, so it works from file://). */
  function decodePack(text) {
    var binary = atob(text.trim());
    var bytes = new Uint8Array(binary.length);
    for (var i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
    var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    return new Response(stream).text().then(JSON.parse);
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
    var pre = el("pre", { "class": "json" });
    jsonLines(value, root, null, 0, "", []).forEach(function (line) {
      var hit = divs.filter(function (d) { return under(line[1], d.path); });
      var isFirst = first && under(line[1], first.path);
      pre.appendChild(el("span", {
        "class": "ln" + (hit.length ? " mark" : "") + (isFirst ? " first" : ""), "data-path": line[1] || null,
        title: hit.length ? hit[0].path + ": " + show(hit[0].left) + " \u2192 " + show(hit[0].right) : null,
        text: line[0]
      }));
    });
    return pre;
  }

  /* ---- checks: the name never wraps; long values fold under it ---- */
  function value(label, v) {
    var text = JSON.stringify(v);
    if (text === undefined) text = "undefined";
    if (text.length <= 160) return el("div", { "class": "check-value" }, el("span", { "class": "k", text: label }), el("code", { text: text }));
    return el("details", { "class": "check-value" }, el("summary", {}, el("span", { "class": "k", text: label }),
      el("code", { text: text.slice(0, 120) + "\u2026 (" + text.length + " chars)" })), el("pre", { text: show(v) }));
  }
  /* why each check matters, from the check registry (index "why"; a name ending in * covers a family) */
  var whys = {};
  function whyOf(name) {
    if (whys[name]) return whys[name];
    var best = "";
    Object.keys(whys).forEach(function (k) {
      if (k.slice(-1) === "*" && name.indexOf(k.slice(0, -1)) === 0 && k.length > best.length) best = k;
    });
    return best ? whys[best] : "";
  }
  function checksList(checks) {
    if (!checks.length) return el("p", { "class": "none", text: "no checks" });
    return el("ul", { "class": "checks" }, checks.map(function (k) {
      var why = k.passed ? "" : whyOf(k.name);
      return el("li", { "data-check": k.name, "class": k.passed ? "ok" : "bad" },
        el("div", { "class": "check-head" }, el("span", { "class": "status", text: k.passed ? "\u2713 pass" : "\u2717 fail" }),
          el("span", { "class": "check-name", text: k.name, title: whyOf(k.name) })),
        why ? el("div", { "class": "check-why", text: "why it matters: " + why }) : null,
        value("expected", k.expected), value("actual", k.actual));
    }));
  }

  /* ---- raw wire: one block per chunk, with its arrival time ---- */
  function wireChunks(title, text, offsets, times, count) {
    var summary = title + " (" + count + " chunk(s), " + text.length + " chars)";
    if (!text) return el("details", {}, el("summary", { text: summary }), el("p", { "class": "none", text: "empty" }));
    if (!offsets || !offsets.length) {
      return el("details", {}, el("summary", { text: summary + " \u2014 chunk boundaries not recorded" }),
        el("pre", { "class": "wire", text: text }));
    }
    var list = el("ol", { "class": "chunks" });
    offsets.forEach(function (start, i) {
      var end = i + 1 < offsets.length ? offsets[i + 1] : text.length;
      var at = times && i < times.length ? times[i] : null;
      var gap = times && i > 0 && i < times.length ? times[i] - times[i - 1] : null;
      list.appendChild(el("li", { "data-chunk": i },
        el("div", { "class": "chunk-head" }, "#" + i + " \u00b7 " + (end - start) + " chars \u00b7 at " + ms(at) +
          (gap === null ? "" : " (+" + ms(gap) + ")")),
        el("pre", { "class": "wire", text: text.slice(start, end) })));
    });
    return el("details", {}, el("summary", { text: summary }), list);
  }

  /* ---- event diff, aligned by block ---- */
  var OP_LABEL = { same: "=", changed: "~", removed: "\u2212", added: "+" };
  function blockCell(b) {
    if (!b) return el("td", { "class": "empty", text: "" });
    var where = b.kind + (b.index === null || b.index === undefined ? "" : " #" + b.index) +
      " \u00b7 events " + b.events[0] + (b.events[1] !== b.events[0] ? "\u2013" + b.events[1] : "");
    return el("td", {}, el("div", { "class": "block-kind", text: where }), el("code", { text: b.text }));
  }
  function eventDiff(diff) {
    if (!diff) return el("p", { "class": "none", text: "no views to align" });
    return el("div", { "class": "event-diff" },
      el("p", { "class": "meta", text: diff.changes + " change(s) by " + (diff.by === "events" ? "stream block" : "content part") +
        " (baseline (frontend) \u2192 translated, as the verdict compared them)" }),
      el("table", {}, el("thead", {}, el("tr", {}, el("th", { text: "" }), el("th", { text: "baseline (frontend)" }),
        el("th", { text: "translated" }))),
      el("tbody", {}, diff.rows.map(function (r) {
        return el("tr", { "class": "op-" + r.op, "data-op": r.op }, el("td", { "class": "op", text: OP_LABEL[r.op] }),
          blockCell(r.left), blockCell(r.right));
      }))));
  }

  /* ---- stream timeline: when each event reached the proxy and the client, per run ---- */
  var KIND_COLOR = {
    message_start: "#607d8b", text_start: "#2e7d32", text_delta: "#43a047", text_end: "#2e7d32",
    thinking_start: "#6a1b9a", thinking_delta: "#8e24aa", thinking_end: "#6a1b9a", tool_call_start: "#1565c0",
    tool_call_delta: "#1e88e5", tool_call_end: "#1565c0", done: "#212121", error: "#c62828"
  };
  function timeline(lines, roles, labels) {
    var present = roles.filter(function (r) { return lines && lines[r]; });
    if (!present.length) return el("p", { "class": "none", text: "no chunk times in this trace (non-streamed, or written before they were kept)" });
    var end = 0;
    present.forEach(function (r) {
      var t = lines[r];
      t.events.forEach(function (e) { end = Math.max(end, e[1] || 0, e[2] || 0); });
    });
    // Scaled to the last event (the SDK's own work after the stream ends is in the "done" figure, not drawn).
    end = end * 1.05 || 1;
    var W = 760, left = 150, laneH = 22, width = W - left - 10, height = present.length * 2 * laneH + 34;
    var x = function (t) { return left + (t / end) * width; };
    var chart = svg("svg", { "class": "timeline", viewBox: "0 0 " + W + " " + height, width: W, height: height, role: "img" },
      svg("title", { text: "when each event came from upstream (read by the proxy; a --sut run: sent by the replay server) and reached the client" }));
    present.forEach(function (role, i) {
      var t = lines[role], y0 = 6 + i * 2 * laneH;
      [["upstream", 1], ["at client", 2]].forEach(function (lane, j) {
        var y = y0 + j * laneH;
        chart.appendChild(svg("text", { x: 4, y: y + 14, "class": "lane", text: labels[role] + " " + lane[0] }));
        chart.appendChild(svg("line", { x1: left, x2: left + width, y1: y + 10, y2: y + 10, "class": "axis" }));
        t.events.forEach(function (e, n) {
          if (e[lane[1]] === null || e[lane[1]] === undefined) return;
          chart.appendChild(svg("rect", { x: x(e[lane[1]]) - 1.5, y: y + 3, width: 3, height: 14,
            fill: KIND_COLOR[e[0]] || "#9e9e9e", "data-kind": e[0] },
            svg("title", { text: "event " + n + " " + e[0] + " " + lane[0] + " at " + ms(e[lane[1]]) })));
        });
      });
      if (t.first_token !== null && t.first_token !== undefined) {
        chart.appendChild(svg("line", { x1: x(t.first_token), x2: x(t.first_token), y1: y0, y2: y0 + 2 * laneH,
          "class": "first-token" }, svg("title", { text: labels[role] + ": first token at the client at " + ms(t.first_token) })));
      }
    });
    var axisY = height - 10;
    [0, 0.25, 0.5, 0.75, 1].forEach(function (f) {
      chart.appendChild(svg("text", { x: x(f * end), y: axisY, "class": "tick", "text-anchor": f === 0 ? "start" : (f === 1 ? "end" : "middle"),
        text: ms(f * end) }));
    });
    var facts = present.map(function (r) { return labels[r] + ": first token " + ms(lines[r].first_token) + ", done " + ms(lines[r].total); });
    return el("div", { "class": "timeline-box" }, chart, el("p", { "class": "meta", text: facts.join(" \u00b7 ") }));
  }

  return { el: el, svg: svg, clear: clear, show: show, ms: ms, decodePack: decodePack, jsonBlock: jsonBlock,
    checksList: checksList, setWhys: function (w) { whys = w || {}; }, wireChunks: wireChunks, eventDiff: eventDiff, timeline: timeline };
})();
