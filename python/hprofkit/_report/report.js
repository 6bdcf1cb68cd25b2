/* hprofkit report views: hand-written, no framework, nothing fetched.
 *
 * Data comes in <script type="application/json" data-hprofkit-view="NAME"
 * data-hprofkit-target="ID"> elements; hprofkit.mount() draws each one,
 * once, into the element of that id with hprofkit.views[NAME](element, data).
 * The bundle may be included many times on one page (one notebook output
 * each): it defines itself once and mounts what is new.
 *
 * Every string that comes from the dump (class names, String values, field
 * names, thread names...) is inserted as text (textContent, text nodes),
 * never parsed as markup. */
(function () {
  "use strict";
  var VERSION = 1;
  if (window.hprofkit && window.hprofkit.version === VERSION) {
    window.hprofkit.mount();
    return;
  }
  var hk = (window.hprofkit = { version: VERSION, views: {} });
  var SVG = "http://www.w3.org/2000/svg";
  var PALETTE = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#ff9da7",
                 "#9c755f", "#bab0ac"];

  // ---- DOM helpers ----------------------------------------------------------

  /* h("div", {cls, text, title, attrs, data, on}, children): an element.
   * children: nodes, strings (as text) or arrays of them; null is skipped. */
  function h(tag, opts, children) {
    var el = document.createElement(tag);
    setup(el, opts, children);
    return el;
  }

  function s(tag, attrs, children) {
    var el = document.createElementNS(SVG, tag);
    var key;
    for (key in attrs || {}) el.setAttribute(key, String(attrs[key]));
    append(el, children);
    return el;
  }

  function setup(el, opts, children) {
    var key;
    opts = opts || {};
    if (opts.cls) el.className = opts.cls;
    if (opts.text != null) el.textContent = String(opts.text);
    if (opts.title != null) el.title = String(opts.title);
    for (key in opts.attrs || {}) if (opts.attrs[key] != null) el.setAttribute(key, String(opts.attrs[key]));
    for (key in opts.data || {}) if (opts.data[key] != null) el.dataset[key] = String(opts.data[key]);
    for (key in opts.on || {}) el.addEventListener(key, opts.on[key]);
    append(el, children);
  }

  function append(el, children) {
    if (children == null) return;
    if (!Array.isArray(children)) children = [children];
    children.forEach(function (child) {
      if (child == null || child === false) return;
      if (Array.isArray(child)) append(el, child);
      else el.appendChild(typeof child === "string" || typeof child === "number"
                          ? document.createTextNode(String(child)) : child);
    });
  }

  function clear(el) {
    while (el.firstChild) el.removeChild(el.firstChild);
  }

  // ---- formats --------------------------------------------------------------

  var UNITS = ["B", "KiB", "MiB", "GiB", "TiB"];

  /* 1536 -> "1.5 KiB", as hprofkit's human_size. */
  function bytes(n) {
    var unit = 0;
    var v = n;
    while (Math.abs(v) >= 1024 && unit < UNITS.length - 1) {
      v /= 1024;
      unit++;
    }
    return unit === 0 ? count(v) + " B"
      : v.toLocaleString("en-US", { minimumFractionDigits: 1, maximumFractionDigits: 1 }) + " " + UNITS[unit];
  }

  function count(n) {
    return Math.round(n).toLocaleString("en-US");
  }

  function signed(n, fmt) {
    return (n > 0 ? "+" : n < 0 ? "\u2212" : "") + fmt(Math.abs(n));
  }

  function percent(part, whole) {
    if (!whole) return "\u2013";
    var p = (100 * part) / whole;
    if (p > 0 && p < 0.01) return "<0.01%";
    return (p >= 10 || p === 0 ? p.toFixed(0) : p >= 1 ? p.toFixed(1) : p.toFixed(2)) + "%";
  }

  function plural(n, word, words) {
    return count(n) + " " + (n === 1 ? word : words || word + "s");
  }

  /* A number shown formatted, its exact value in data-value (and the tooltip). */
  function figure(tag, value, fmt, cls) {
    return h(tag, { cls: cls, text: value == null ? "\u2013" : fmt(value),
                    title: value == null ? null : count(value), data: { value: value } });
  }

  // ---- objects and paths ----------------------------------------------------

  function Context(data) {
    var objects = data.objects || { columns: [], rows: [] };
    var col = {};
    objects.columns.forEach(function (name, i) { col[name] = i; });
    this.data = data;
    this.objectRows = objects.rows;
    this.col = col;
    this.paths = data.paths || {};
    this.images = data.images || {};
  }

  Context.prototype.object = function (row) {
    var r = this.objectRows[row];
    var c = this.col;
    return { row: row, id: r[c.id], cls: r[c["class"]], kind: r[c.kind], shallow: r[c.shallow_size],
             retained: r[c.retained_size], retainedCount: r[c.retained_count], preview: r[c.preview] };
  };

  /* "java.util.HashMap$Node[]": the package muted, the simple name strong. */
  function className(name) {
    var end = name.indexOf("[");
    var dot = name.lastIndexOf(".", end < 0 ? name.length : end);
    return h("span", { cls: "hk-class", title: name }, [
      dot > 0 ? h("span", { cls: "hk-pkg", text: name.slice(0, dot + 1) }) : null,
      h("span", { cls: "hk-simple", text: name.slice(dot + 1) })]);
  }

  function simpleName(name) {
    var end = name.indexOf("[");
    return name.slice(name.lastIndexOf(".", end < 0 ? name.length : end) + 1);
  }

  /* An object as one line: class (or "class X" for a class object), id, value. */
  function objectLabel(o) {
    var parts = [];
    if (o.kind === "class") {
      parts.push(h("span", { cls: "hk-kw", text: "class " }), className(o.preview || "?"));
    } else {
      parts.push(className(o.cls));
      if (o.preview != null) parts.push(" ", h("span", { cls: o.kind === "instance" ? "hk-str" : "hk-muted",
                                                          text: o.preview }));
    }
    parts.push(" ", h("span", { cls: "hk-id", text: "@0x" + o.id }));
    return h("span", { cls: "hk-obj", data: { id: o.id } }, parts);
  }

  function objectTitle(o) {
    return o.kind === "class" ? "class " + simpleName(o.preview || "?") : simpleName(o.cls);
  }

  function pathView(ctx, path) {
    if (!path) return h("p", { cls: "hk-muted", text: "No strong path from a GC root: only weakly reachable, " +
                                                    "or unreachable." });
    var list = h("ol", { cls: "hk-path" });
    path.forEach(function (hop, i) {
      if (typeof hop === "number") {
        list.appendChild(h("li", { cls: "hk-hop hk-skip", text: "\u22ee " + plural(hop, "hop") + " left out" }));
        return;
      }
      var type = hop[0];
      var name = hop[1];
      var target = ctx.object(hop[2]);
      var via;
      if (type === "ROOT") via = [h("span", { cls: "hk-root", text: "GC root" }), " ", h("code", { text: name })];
      else if (type === "ARRAY_ENTRY") via = ["\u2193 ", h("code", { cls: "hk-field", text: name })];
      else if (type === "LOCAL") via = ["\u2193 local variable" + (name ? " in " : ""),
                                         name ? h("code", { cls: "hk-field", text: name }) : null];
      else via = ["\u2193 ", type === "STATIC_FIELD" ? h("span", { cls: "hk-kw", text: "static " }) : null,
                  h("code", { cls: "hk-field", text: "." + name })];
      list.appendChild(h("li", { cls: "hk-hop" + (i === path.length - 1 ? " hk-last" : "") }, [
        h("div", { cls: "hk-via" }, via), h("div", { cls: "hk-target" }, [objectLabel(target),
          h("span", { cls: "hk-size", text: " " + bytes(target.retained) + " retained" })])]));
    });
    return list;
  }

  /* An object's card: sizes, value, and its path from a GC root. */
  function objectDetails(ctx, row) {
    var o = ctx.object(row);
    var path = ctx.paths[String(row)];
    return h("div", { cls: "hk-details" }, [
      h("div", { cls: "hk-details-head" }, objectLabel(o)),
      h("dl", { cls: "hk-facts" }, [
        h("dt", { text: "kind" }), h("dd", { text: o.kind.replace("_", " ") }),
        h("dt", { text: "shallow" }), figure("dd", o.shallow, bytes),
        h("dt", { text: "retained" }), h("dd", null, [figure("span", o.retained, bytes), " in ",
                                                       plural(o.retainedCount, "object")])]),
      path === undefined ? null : h("h4", { text: "Path from a GC root" }),
      path === undefined ? null : pathView(ctx, path)]);
  }

  // ---- charts ---------------------------------------------------------------

  /* Horizontal bars: items [{label (node), value, title, color, muted, onClick}], the longest
   * bar the largest value; each value's share of `whole` beside it. */
  function barChart(items, whole) {
    var list = h("div", { cls: "hk-bars" });
    var max = items.reduce(function (m, it) { return Math.max(m, it.value); }, 0) || 1;  // the longest bar
    items.forEach(function (it, i) {
      var fill = h("div", { cls: "hk-bar-fill" });
      fill.style.width = Math.max(0.4, (100 * it.value) / max) + "%";
      fill.style.background = it.color || PALETTE[i % PALETTE.length];
      var row = h(it.onClick ? "button" : "div", {
        cls: "hk-bar" + (it.muted ? " hk-bar-muted" : ""), attrs: { type: it.onClick ? "button" : null },
        title: it.title, data: { value: it.value }, on: it.onClick ? { click: it.onClick } : null }, [
        h("div", { cls: "hk-bar-label" }, it.label),
        h("div", { cls: "hk-bar-track" }, fill),
        h("div", { cls: "hk-bar-value" }, [h("b", { text: bytes(it.value) }),
                                           h("span", { cls: "hk-muted", text: " " + percent(it.value, whole) })])]);
      list.appendChild(row);
    });
    return list;
  }

  /* One stacked bar of parts [{name, value, label (node), extra, muted}] with a legend;
   * `kind` names the parts for tests (data-kind on the legend, data-part on each item). */
  function stackedBar(parts, whole, fmt, kind) {
    var bar = h("div", { cls: "hk-stack" });
    var legend = h("ul", { cls: "hk-legend", data: { kind: kind } });
    parts.forEach(function (p, i) {
      var color = p.muted ? "#d5d9e0" : PALETTE[i % PALETTE.length];
      var seg = h("div", { cls: "hk-stack-seg", title: p.name + ": " + fmt(p.value) });
      seg.style.width = (100 * p.value) / (whole || 1) + "%";
      seg.style.background = color;
      bar.appendChild(seg);
      var swatch = h("span", { cls: "hk-swatch" });
      swatch.style.background = color;
      legend.appendChild(h("li", { data: { part: p.name } }, [swatch, p.label || h("b", { text: p.name }), " ",
        figure("span", p.value, fmt, "hk-legend-value"),
        h("span", { cls: "hk-muted", text: " (" + percent(p.value, whole) + ")" }),
        p.extra ? h("span", { cls: "hk-muted", text: " \u00b7 " + p.extra }) : null]));
    });
    return h("div", { cls: "hk-stacked" }, [bar, legend]);
  }

  // ---- tables ---------------------------------------------------------------

  /* A sortable, filterable table over rows (arrays).  columns: [{label, get(row),
   * fmt, num, render(row) -> node, desc (first click sorts descending)}].
   * opts: filter(row) -> text, sort (column index), desc, page (rows shown,
   * then "show more"), tools (a node beside the filter), footer (node), name
   * (for tests: data-table). */
  function dataTable(columns, rows, opts) {
    var state = { sort: opts.sort || 0, desc: opts.desc !== false, query: "", shown: opts.page || 200 };
    var tbody = h("tbody");
    var heads = columns.map(function (c, i) {
      function sortHere() {
        if (state.sort === i) state.desc = !state.desc;
        else { state.sort = i; state.desc = c.num ? c.desc !== false : false; }
        state.shown = opts.page || 200;
        draw();
      }
      return h("th", { cls: c.num ? "hk-num" : "", attrs: { scope: "col", "aria-sort": "none", tabindex: 0 },
                       data: { col: i }, title: "Sort by " + c.label.toLowerCase(),
                       on: { click: sortHere,
                             keydown: function (ev) { if (ev.key === "Enter" || ev.key === " ") { ev.preventDefault(); sortHere(); } } }
                     }, [c.label, h("span", { cls: "hk-sort" })]);
    });
    var status = h("span", { cls: "hk-muted hk-table-status" });
    var more = h("button", { cls: "hk-more", attrs: { type: "button" }, text: "Show more",
                             on: { click: function () { state.shown += opts.page || 200; draw(); } } });
    var input = opts.filter ? h("input", {
      cls: "hk-filter", attrs: { type: "search", placeholder: opts.placeholder || "Filter", "aria-label": "Filter" },
      on: { input: function () { state.query = input.value; state.shown = opts.page || 200; draw(); } } }) : null;
    var table = h("table", { cls: "hk-table", data: { table: opts.name } }, [h("thead", null, h("tr", null, heads)),
                                                                              tbody]);

    function matches() {
      var q = state.query.trim();
      if (!q || !opts.filter) return rows;
      var re = null;
      try { re = new RegExp(q, "i"); } catch (e) { re = null; }
      var lower = q.toLowerCase();
      return rows.filter(function (r) {
        var text = opts.filter(r);
        return re ? re.test(text) : text.toLowerCase().indexOf(lower) >= 0;
      });
    }

    function draw() {
      var col = columns[state.sort];
      var sign = state.desc ? -1 : 1;
      var picked = matches().slice();
      picked.sort(function (a, b) {
        var x = col.get(a), y = col.get(b);
        if (x == null) x = -Infinity;
        if (y == null) y = -Infinity;
        return (x < y ? -1 : x > y ? 1 : 0) * sign;
      });
      heads.forEach(function (th, i) {
        th.setAttribute("aria-sort", i !== state.sort ? "none" : state.desc ? "descending" : "ascending");
      });
      clear(tbody);
      var frag = document.createDocumentFragment();
      picked.slice(0, state.shown).forEach(function (r) {
        frag.appendChild(h("tr", { cls: "hk-row" }, columns.map(function (c) {
          var value = c.get(r);
          if (c.render) return h("td", { cls: c.num ? "hk-num" : "" }, c.render(r));
          return c.num ? figure("td", value, c.fmt || count, "hk-num") : h("td", { text: value });
        })));
      });
      tbody.appendChild(frag);
      status.textContent = "Showing " + count(Math.min(state.shown, picked.length)) + " of " +
        plural(picked.length, opts.noun || "row", opts.nouns) + (picked.length < rows.length ? " matching" : "");
      more.hidden = picked.length <= state.shown;
    }

    draw();
    return h("div", { cls: "hk-table-wrap" }, [
      h("div", { cls: "hk-toolbar" }, [input, opts.tools || null, status]),
      h("div", { cls: "hk-scroll" }, table), more, opts.footer || null]);
  }

  // ---- sections -------------------------------------------------------------

  function section(id, title, subtitle, body) {
    return h("section", { cls: "hk-section", attrs: { id: "hk-" + id }, data: { section: id } }, [
      h("header", { cls: "hk-section-head" }, [h("h2", { text: title }),
                                               subtitle ? h("p", { cls: "hk-muted", text: subtitle }) : null]),
      body]);
  }

  function tile(label, value, fmt, name, note) {
    return h("div", { cls: "hk-tile", data: { figure: name } }, [
      h("div", { cls: "hk-tile-label", text: label }), figure("div", value, fmt, "hk-tile-value"),
      note ? h("div", { cls: "hk-tile-note hk-muted", text: note }) : null]);
  }

  function fact(dl, label, value) {
    if (value == null || value === "") return;
    dl.appendChild(h("dt", { text: label }));
    dl.appendChild(h("dd", null, value));
  }

  function when(ms) {
    var d = new Date(ms);
    return isNaN(d.getTime()) ? String(ms) : d.toISOString().replace("T", " ").replace(/\.\d+Z$/, " UTC");
  }

  hk.views.overview = function (el, data, ctx) {
    var file = data.file;
    var reachable = data.counts === "reachable";
    var tiles = h("div", { cls: "hk-tiles" }, [
      tile(reachable ? "Reachable heap" : "Heap size (garbage too)", data.total, bytes, "total",
           "shallow size of " + plural(data.instances_and_arrays, reachable ? "reachable instance" : "instance") +
           " and arrays"),
      tile("Unreachable", data.unreachable.bytes, bytes, "unreachable",
           plural(data.unreachable.objects, "object") + " no GC root reaches" +
           (reachable ? ", counted nowhere else" : ", counted in every figure")),
      tile("Objects", data.objects, count, "objects", "instances, arrays and class objects"),
      tile("Classes", data.classes, count, "classes"),
      tile("GC roots", data.gc_roots, count, "gc_roots")]);
    var facts = h("dl", { cls: "hk-facts hk-file" });
    if (file) {
      fact(facts, "File", file.name);
      fact(facts, "Size on disk", bytes(file.size) + (file.compression ? " (" + file.compression + ")" : ""));
      fact(facts, "Format", file.format + ", " + file.id_size + "-byte identifiers");
      fact(facts, "Dumped at", when(file.timestamp_ms));
      fact(facts, "Heap dump", (file.heap_dump + 1) + " of " + file.heap_dumps +
           (file.complete ? "" : " \u2014 the dump was cut short (no HEAP_DUMP_END)"));
    } else {
      fact(facts, "Heap", data.label);
      fact(facts, "Identifiers", data.id_size + " bytes");
    }
    if (data.instances != null) fact(facts, "Instances / arrays", count(data.instances) + " / " + count(data.arrays));
    fact(facts, "Reference semantics", data.semantics);
    var parts = data.composition.map(function (c) {
      return { name: c[0], value: c[2], extra: plural(c[1], "object"), label: className(c[0]) };
    });
    var rest = data.total - parts.reduce(function (sum, p) { return sum + p.value; }, 0);
    if (rest > 0) parts.push({ name: "other classes", value: rest, muted: true });
    var bytesCard = h("div", { cls: "hk-card" }, [
      data.heaps && data.heaps.length > 1 ? [h("h3", { text: "Bytes per heap" }),
        stackedBar(data.heaps.map(function (x) { return { name: x[0], value: x[2], extra: plural(x[1], "object") }; }),
                   data.total, bytes, "heap")] : null,
      h("h3", { text: "Largest classes by shallow size" }),
      parts.length ? stackedBar(parts, data.total, bytes, "class") : h("p", { cls: "hk-muted", text: "No objects." })]);
    var details = h("div", { cls: "hk-chart-details" });
    var selected = null;
    var items = data.dominators.rows.map(function (r, i) {
      var o = ctx.object(r[0]);
      return { value: r[1], label: objectLabel(o), title: objectTitle(o) + ": " + count(r[1]) + " bytes retained",
               onClick: function (ev) {
                 var bar = ev.currentTarget;
                 if (selected) selected.classList.remove("hk-selected");
                 clear(details);
                 if (selected === bar) { selected = null; return; }
                 selected = bar;
                 bar.classList.add("hk-selected");
                 details.appendChild(objectDetails(ctx, r[0]));
               } };
    });
    if (data.dominators.rest > 0) items.push({ value: data.dominators.rest, label: h("span", { cls: "hk-muted",
      text: "everything else" }), color: "#d5d9e0", muted: true });
    var chart = h("div", { cls: "hk-card" }, [
      h("h3", { text: "Biggest objects by retained size" }),
      h("p", { cls: "hk-muted", text: "Top-level dominators: what each keeps alive is freed with it. Click one " +
        "for a path from a GC root (one search finds them all: a path never passes through another object listed)." }),
      data.dominators.rows.length ? barChart(items, data.total) : h("p", { text: "No object retains anything." }),
      details]);
    append(el, [tiles, h("div", { cls: "hk-grid" }, [h("div", { cls: "hk-card" }, [h("h3", { text: "Dump" }), facts]),
                                                    bytesCard]), chart]);
  };

  hk.views.suspects = function (el, data, ctx) {
    var groups = data.groups || [];
    if (!data.items.length && !groups.length) {
      el.appendChild(h("div", { cls: "hk-card hk-ok" }, [
        h("b", { text: "No leak suspect. " }),
        "No single object, and no class's top-level objects together, keep more than " + percent(data.share, 1) +
        " of the heap (" + bytes(data.threshold) + ") alive."]));
      return;
    }
    data.items.forEach(function (item, i) {
      var o = ctx.object(item.object);
      var share = h("div", { cls: "hk-share" });
      var fill = h("div", { cls: "hk-share-fill" });
      fill.style.width = (100 * item.retained) / data.total + "%";
      share.appendChild(fill);
      el.appendChild(h("article", { cls: "hk-card hk-suspect", data: { object: o.id } }, [
        h("h3", null, ["Problem suspect " + (i + 1)]),
        h("p", { cls: "hk-lead" }, [
          o.kind === "class" ? "The class " : "One instance of ", className(o.kind === "class" ? o.preview || "?" : o.cls),
          " occupies ", figure("b", item.retained, bytes), " (" + percent(item.retained, data.total) + ") of the heap's ",
          bytes(data.total), ": it keeps ", plural(o.retainedCount, "object"), " alive."]),
        share,
        accumulation(ctx, item, data.drop_ratio),
        accumulated(item.accumulated),
        h("details", { cls: "hk-more-details", attrs: { open: "" } }, [
          h("summary", { text: "Shortest path from a GC root" }), pathView(ctx, item.path)])]));
    });
    /* MAT's class suspects: many top-level objects of one class holding much together. */
    groups.forEach(function (group, i) {
      var share = h("div", { cls: "hk-share" });
      var fill = h("div", { cls: "hk-share-fill" });
      fill.style.width = (100 * group.retained) / data.total + "%";
      share.appendChild(fill);
      var list = h("ol", { cls: "hk-path" });
      group.biggest.forEach(function (pair) {
        list.appendChild(h("li", { cls: "hk-hop" }, [h("div", { cls: "hk-target" }, [
          objectLabel(ctx.object(pair[0])), " ", figure("span", pair[1], bytes, "hk-size")])]));
      });
      el.appendChild(h("article", { cls: "hk-card hk-suspect hk-class-suspect", data: { "class": group["class"] } }, [
        h("h3", null, ["Problem suspect " + (data.items.length + i + 1)]),
        h("p", { cls: "hk-lead" }, [
          plural(group.instances, "instance") + " of ", className(group["class"]), " occupy ",
          figure("b", group.retained, bytes), " (" + percent(group.retained, data.total) + ") of the heap's ",
          bytes(data.total), ", each of them a top-level object of the dominator tree."]),
        share,
        h("details", { cls: "hk-more-details" }, [h("summary", { text: "The biggest of them" }), list])]));
    });
  };

  /* MAT's "accumulated objects by class" at an accumulation point. */
  function accumulated(data) {
    if (!data || !data.objects) return null;
    return h("details", { cls: "hk-more-details" }, [
      h("summary", { text: "Accumulated objects by class: " + plural(data.objects, "object") + " of " +
                           plural(data.classes, "class", "classes") + " held directly" }),
      dataTable([
        { label: "Class", get: function (r) { return r[0]; }, render: function (r) { return className(r[0]); } },
        { label: "Objects", num: true, get: function (r) { return r[1]; } },
        { label: "Shallow", num: true, fmt: bytes, get: function (r) { return r[2]; } },
        { label: "Retained", num: true, fmt: bytes, get: function (r) { return r[3]; } }], data.rows, {
        sort: 3, noun: "class", nouns: "classes", name: "accumulated", page: 10 })]);
  }

  /* Where a suspect's memory accumulates: MAT's walk down the biggest dominated child. */
  function accumulation(ctx, item, ratio) {
    var chain = item.chain;
    var last = chain[chain.length - 1];
    if (chain.length < 2) return h("p", null, ["The memory is spread over what it dominates directly: no single " +
      "object below it keeps " + percent(ratio, 1) + " of it."]);
    var point = ctx.object(last[0]);
    var levels = chain.reduce(function (n, link) { return n + (typeof link === "number" ? link : 1); }, 0) - 1;
    var list = h("ol", { cls: "hk-path hk-chain" });
    chain.forEach(function (link, i) {
      if (typeof link === "number") {
        list.appendChild(h("li", { cls: "hk-hop hk-skip", text: "\u22ee " + plural(link, "level") + " left out" }));
        return;
      }
      list.appendChild(h("li", { cls: "hk-hop" + (i === chain.length - 1 ? " hk-last" : "") }, [
        h("div", { cls: "hk-target" }, [objectLabel(ctx.object(link[0])), " ",
          figure("span", link[1], bytes, "hk-size"),
          h("span", { cls: "hk-size", text: " (" + percent(link[1], item.retained) + ")" })])]));
    });
    return h("div", { cls: "hk-accumulation" }, [
      h("p", null, ["The memory is accumulated in one " + (point.kind === "class" ? "class " : "instance of "),
        className(point.kind === "class" ? point.preview || "?" : point.cls),
        ", " + plural(levels, "level") + " down the dominator tree, retaining ", figure("b", last[1], bytes),
        item.chain_stopped ? " (the walk stopped there: it goes on further)" : "", "."]),
      h("details", { cls: "hk-more-details" }, [h("summary", { text: "Dominator chain to the accumulation point" }),
                                                list])]);
  }

  var STATUS = { LEAKING: ["YES", "hk-leaking"], NOT_LEAKING: ["NO", "hk-not-leaking"],
                 UNKNOWN: ["UNKNOWN", "hk-unknown"] };
  var ROOTS = { JNI_GLOBAL: "Global variable in native code", JNI_LOCAL: "Local variable in native code",
                JAVA_FRAME: "Java local variable", NATIVE_STACK: "Input or output parameters in native code",
                STICKY_CLASS: "System class", THREAD_BLOCK: "Thread block", MONITOR_USED: "Monitor",
                THREAD_OBJECT: "Thread object" };

  /* A leak trace as LeakCanary draws it: root first, statuses, suspect references underlined. */
  function traceView(ctx, group) {
    var list = h("ol", { cls: "hk-trace" });
    list.appendChild(h("li", { cls: "hk-trace-root" }, [h("span", { cls: "hk-root", text: "GC root" }), " ",
                                                        ROOTS[group.root] || group.root]));
    group.trace.forEach(function (node) {
      if (typeof node === "number") {
        list.appendChild(h("li", { cls: "hk-trace-node hk-skip", text: "\u22ee " + plural(node, "object") + " left out" }));
        return;
      }
      var o = ctx.object(node.object);
      var status = STATUS[node.status] || ["?", ""];
      var ref = node.reference;
      list.appendChild(h("li", { cls: "hk-trace-node " + status[1] }, [
        h("div", { cls: "hk-trace-obj" }, [objectLabel(o), o.kind === "class" ? null : h("span", { cls: "hk-muted",
          text: o.kind === "instance" ? " instance" : " array" })]),
        h("div", { cls: "hk-trace-status" }, [h("span", { cls: "hk-badge " + status[1], text: "Leaking: " + status[0] }),
          node.reason ? h("span", { cls: "hk-muted", text: " " + node.reason }) : null,
          node.status === "LEAKING" ? h("span", { cls: "hk-muted", text: " \u00b7 retaining " + bytes(o.retained) +
                                                                             " in " + plural(o.retainedCount, "object") })
                                    : null]),
        node.labels.length ? h("ul", { cls: "hk-labels" }, node.labels.map(function (l) {
          return h("li", { text: l }); })) : null,
        ref ? h("div", { cls: "hk-trace-ref" }, ["\u2193 ",
          ref.type === "STATIC_FIELD" ? h("span", { cls: "hk-kw", text: "static " }) : null,
          h("code", { cls: "hk-ref" }, [
            h("span", { cls: "hk-muted", text: simpleName(ref.owner || "") + (ref.type === "LOCAL" ? " " : ".") }),
            h("span", { cls: "hk-field" + (ref.suspect ? " hk-suspect-ref" : ""), text: ref.name,
                        title: ref.suspect ? "suspect reference: the leak is caused by one of these" : null })])])
            : null]));
    });
    return list;
  }

  var LEAK_PAGE = 25;

  /* One fingerprint: its trace, and its leaking objects (their table drawn when first opened). */
  function leakCard(ctx, g) {
    var last = ctx.object(g.trace[g.trace.length - 1].object);  // a cut trace keeps its ends
    var columns = [
      { label: "Leaking object", get: function (r) { return ctx.object(r[0]).id; },
        render: function (r) { return objectLabel(ctx.object(r[0])); } },
      g.keys ? { label: "Key", get: function (r) { return r[2] || ""; } } : null,
      { label: "Retained", num: true, fmt: bytes, get: function (r) { return r[1]; } }].filter(Boolean);
    var details = h("details", { cls: "hk-more-details", attrs: g.count > 1 ? { open: "" } : null },
                    h("summary", { text: plural(g.count, "leaking object") }));
    function fill() {
      if (!details.open || details.childNodes.length > 1) return;
      details.appendChild(dataTable(columns, g.objects, { sort: columns.length - 1, page: 10, noun: "object",
        name: "leak-objects", footer: g.more ? h("p", { cls: "hk-muted", text: "and " + plural(g.more, "more leak") +
                                                                               " with this fingerprint" }) : null }));
    }
    details.addEventListener("toggle", fill);
    fill();
    return h("article", { cls: "hk-card hk-leak" + (g.library ? " hk-library" : ""),
                          data: { fingerprint: g.fingerprint, count: g.count } }, [
      h("header", { cls: "hk-leak-head" }, [
        h("span", { cls: "hk-count", text: "\u00d7" + count(g.count), title: plural(g.count, "leak") }),
        h("h3", null, [className(last.kind === "class" ? last.preview || "?" : last.cls)]),
        g.library ? h("span", { cls: "hk-badge hk-lib", text: "library leak" }) : h("span", { cls: "hk-badge hk-app",
          text: "application leak" }),
        h("span", { cls: "hk-spacer" }),
        h("span", { cls: "hk-muted" }, ["retaining ", figure("b", g.retained, bytes)])]),
      g.library ? h("p", { cls: "hk-muted" }, [g.pattern ? h("code", { text: g.pattern }) : null,
                                                g.description ? " \u2014 " + g.description : null]) : null,
      h("p", { cls: "hk-muted hk-signature" }, ["Signature ", h("code", { text: g.fingerprint })]),
      traceView(ctx, g),
      details]);
  }

  hk.views.leaks = function (el, data, ctx) {
    el.appendChild(h("p", { cls: "hk-lead" }, data.total ? [
      figure("b", data.total, count), " leak" + (data.total === 1 ? "" : "s") + ": ",
      figure("span", data.application, count), " application, ", figure("span", data.library, count),
      " library; ", figure("b", data.fingerprints, count), " distinct fingerprint" + (data.fingerprints === 1 ? "" : "s") + "."]
      : ["No leak trace: LeakCanary's finders found no watched object, destroyed activity, detached fragment, " +
         "view or window that is still strongly reachable."]));
    var cards = h("div", { cls: "hk-leak-list" });
    el.appendChild(cards);
    var shown = 0;
    var more = h("button", { cls: "hk-more", attrs: { type: "button" }, on: { click: showMore } });
    function showMore() {  // a page of cards at a time: hundreds of traces would slow the page's first draw
      data.groups.slice(shown, shown + LEAK_PAGE).forEach(function (g) { cards.appendChild(leakCard(ctx, g)); });
      shown = Math.min(shown + LEAK_PAGE, data.groups.length);
      more.hidden = shown >= data.groups.length;
      more.textContent = "Show " + plural(Math.min(LEAK_PAGE, data.groups.length - shown), "more fingerprint");
    }
    showMore();
    el.appendChild(more);
    if (data.rest.groups) el.appendChild(h("p", { cls: "hk-muted", text: "and " + plural(data.rest.groups, "more fingerprint") +
      " (" + plural(data.rest.leaks, "leak") + ") not listed here." }));
  };

  /* The histogram; with several heaps (Android), a choice of one heap, whose
   * instances and shallow bytes the table then shows (retained stays all heaps'). */
  hk.views.histogram = function (el, data) {
    var maxRetained = data.rows.reduce(function (m, r) { return Math.max(m, r[4]); }, 0) || 1;
    var rest = data.rest;
    var heaps = data.heaps || [];
    var holder = h("div");
    el.appendChild(h("p", { cls: "hk-muted", text: data.counts === "all" ?
      "Every object of the dump, unreachable ones included (as VisualVM counts them)." :
      "The reachable objects, as Eclipse MAT counts them: garbage is listed under Unreachable objects." }));
    function draw(heap) {
      var rows = heap < 0 ? data.rows : data.rows.filter(function (r) { return r[5][heap]; }).map(function (r) {
        return [r[0], r[1], r[5][heap][0], r[5][heap][1], r[4]];
      });
      clear(holder);
      holder.appendChild(dataTable([
        { label: "Class", get: function (r) { return r[0]; },
          render: function (r) { return [className(r[0]), r[1] ? h("span", { cls: "hk-id", text: " @0x" + r[1] }) : null]; } },
        { label: "Instances", num: true, get: function (r) { return r[2]; } },
        { label: "Shallow", num: true, fmt: bytes, get: function (r) { return r[3]; } },
        { label: heap < 0 ? "Retained" : "Retained (all heaps)", num: true, fmt: bytes, get: function (r) { return r[4]; },
          render: function (r) {
            var fill = h("span", { cls: "hk-cell-bar" });
            fill.style.width = Math.round((90 * r[4]) / maxRetained) + "px";
            return [fill, figure("span", r[4], bytes)];
          } }], rows, {
        sort: 3, filter: function (r) { return r[0]; }, placeholder: "Filter classes (text or regular expression)",
        noun: "class", nouns: "classes", name: "histogram", page: 100,
        tools: heaps.length ? chooser : null,
        footer: rest.rows ? h("p", { cls: "hk-muted hk-rest", text: "and " + plural(rest.rows, "more class", "more classes") +
          " not in this report: " + plural(rest.instances, "object") + ", " + bytes(rest.shallow_size) + " shallow." }) : null }));
    }
    var chooser = h("select", { cls: "hk-heap-choice", attrs: { "aria-label": "Heap" },
                                on: { change: function () { draw(Number(chooser.value)); } } },
                    [h("option", { attrs: { value: -1 }, text: "All heaps" })].concat(heaps.map(function (name, i) {
                      return h("option", { attrs: { value: i }, text: "Heap: " + name });
                    })));
    draw(-1);
    el.appendChild(holder);
  };

  /* MAT's Unreachable Objects Histogram: the garbage the dump kept, by class. */
  hk.views.unreachable = function (el, data) {
    el.appendChild(h("p", { cls: "hk-lead" }, data.total_rows ? [
      figure("b", data.bytes, bytes), " in " + plural(data.objects, "object") + " no GC root reaches (" +
      plural(data.total_rows, "class", "classes") + "): " +
      (data.counted ? "counted in this report's figures, as asked." :
                      "left out of every other figure of this report, as Eclipse MAT leaves them out.")] :
      [h("span", { text: "No unreachable objects: every object of the dump is reachable from a GC root." })]));
    if (!data.total_rows) return;
    var rest = data.rest;
    el.appendChild(dataTable([
      { label: "Class", get: function (r) { return r[0]; },
        render: function (r) { return [className(r[0]), r[1] ? h("span", { cls: "hk-id", text: " @0x" + r[1] }) : null]; } },
      { label: "Instances", num: true, get: function (r) { return r[2]; } },
      { label: "Shallow", num: true, fmt: bytes, get: function (r) { return r[3]; } }], data.rows, {
      sort: 2, filter: function (r) { return r[0]; }, placeholder: "Filter classes (text or regular expression)",
      noun: "class", nouns: "classes", name: "unreachable", page: 100,
      footer: rest.rows ? h("p", { cls: "hk-muted hk-rest", text: "and " + plural(rest.rows, "more class", "more classes") +
        " not in this report: " + plural(rest.instances, "object") + ", " + bytes(rest.shallow_size) + " shallow." }) : null }));
  };

  var IMAGE_URI = /^data:image\/(png|jpeg|webp);base64,[A-Za-z0-9+\/]+=*$/;
  var THUMB_SIDE = 96;

  /* A bitmap's thumbnail (a data: URI the report made), or a placeholder saying why there is none. */
  function thumb(uri, why, title, width, height) {
    if (uri && IMAGE_URI.test(uri)) {
      var img = h("img", { cls: "hk-thumb", attrs: { src: uri, alt: title }, title: title });
      var side = Math.max(width || 0, height || 0);
      if (side && side < THUMB_SIDE) {  // a small bitmap is shown larger, its pixels square
        var scale = Math.floor(THUMB_SIDE / side);
        img.style.width = width * scale + "px";
        img.style.height = height * scale + "px";
      }
      return img;
    }
    return h("div", { cls: "hk-thumb hk-no-thumb", title: why || "" }, h("span", { text: why || "no pixels" }));
  }

  hk.views.bitmaps = function (el, data, ctx) {
    el.appendChild(h("p", { cls: "hk-lead" }, [figure("b", data.count, count), " bitmap" + (data.count === 1 ? "" : "s") +
      " holding ", figure("b", data.bytes, bytes), " of pixels; the dump has the pixels of ",
      figure("span", data.with_pixels, count), "."]));
    var thumbs = {};
    var grid = h("div", { cls: "hk-bitmaps" });
    data.items.forEach(function (item) {
      var o = ctx.object(item[0]);
      var size = (item[1] == null ? "?" : item[1]) + "\u00d7" + (item[2] == null ? "?" : item[2]);
      var title = size + (item[3] ? " " + item[3] : "") + " @0x" + o.id;
      var uri = ctx.images[String(item[0])];
      thumbs[item[0]] = uri ? function () { return thumb(uri, null, title); } : null;
      grid.appendChild(h("figure", { cls: "hk-bitmap", data: { id: o.id } }, [
        h("div", { cls: "hk-thumb-box" }, thumb(uri, item[5], title, item[1], item[2])),
        h("figcaption", null, [h("b", { text: size }), item[3] ? h("span", { cls: "hk-muted", text: " " + item[3] }) : null,
          h("br"), item[4] == null ? h("span", { cls: "hk-muted", text: "size unknown" }) : figure("span", item[4], bytes),
          " ", h("span", { cls: "hk-id", text: "@0x" + o.id })])]));
    });
    el.appendChild(grid);
    if (data.rest.bitmaps) el.appendChild(h("p", { cls: "hk-muted", text: "and " + plural(data.rest.bitmaps, "more bitmap") +
      " (" + bytes(data.rest.bytes) + ") not shown." }));
    if (!data.duplicates.length) return;
    el.appendChild(h("h3", { cls: "hk-spaced", text: "The same pixels held more than once" }));
    data.duplicates.forEach(function (g) {
      el.appendChild(h("div", { cls: "hk-card hk-duplicates", data: { digest: g.digest, count: g.count } }, [
        h("p", null, [figure("b", g.count, count), " identical bitmaps", g.wasted == null ? "" : ", wasting ",
                      g.wasted == null ? null : figure("b", g.wasted, bytes)]),
        h("div", { cls: "hk-dup-row" }, g.bitmaps.map(function (row) {
          var o = ctx.object(row);
          return h("span", { cls: "hk-dup" }, [thumbs[row] ? thumbs[row]() : null, h("span", { cls: "hk-id", text: "@0x" + o.id })]);
        }))]));
    });
    if (data.more_duplicates) el.appendChild(h("p", { cls: "hk-muted", text: "and " + plural(data.more_duplicates,
      "more group") + " of duplicates." }));
  };

  hk.views.diff = function (el, data) {
    el.appendChild(h("p", { cls: "hk-lead" }, [h("code", { text: data.a }), " \u2192 ", h("code", { text: data.b }), ": ",
      figure("b", data.total_rows, count), " class" + (data.total_rows === 1 ? "" : "es") + " changed."]));
    function delta(i, fmt) {
      return { num: true, get: function (r) { return r[i + 1] == null ? null : r[i + 1] - r[i]; },
               render: function (r) {
                 if (r[i + 1] == null) return "\u2013";
                 var d = r[i + 1] - r[i];
                 return h("span", { cls: d > 0 ? "hk-grew" : d < 0 ? "hk-shrank" : "", text: signed(d, fmt),
                                    title: fmt(r[i]) + " \u2192 " + fmt(r[i + 1]), data: { value: d } });
               } };
    }
    var rest = data.rest;
    el.appendChild(dataTable([
      { label: "Class", get: function (r) { return r[0]; }, render: function (r) { return className(r[0]); } },
      Object.assign({ label: "\u0394 Instances" }, delta(1, count)),
      Object.assign({ label: "\u0394 Shallow" }, delta(3, bytes)),
      Object.assign({ label: "\u0394 Retained" }, delta(5, bytes)),
      { label: "Instances", num: true, get: function (r) { return r[2]; },
        render: function (r) { return h("span", { cls: "hk-muted", text: count(r[1]) + " \u2192 " + count(r[2]) }); } }],
      data.rows, { sort: 2, filter: function (r) { return r[0]; }, placeholder: "Filter classes", noun: "class", nouns: "classes",
                   name: "diff", page: 100,
                   footer: rest.rows ? h("p", { cls: "hk-muted", text: "and " + plural(rest.rows, "more class", "more classes") +
                     ": " + signed(rest.instances_delta, count) + " objects, " + signed(rest.shallow_size_delta, bytes) + "." }) : null }));
    if (!data.paths.length) return;
    var list = h("ol", { cls: "hk-growth" });
    data.paths.forEach(function (p) {
      list.appendChild(h("li", { cls: "hk-card" }, [
        h("div", null, [h("b", { cls: "hk-grew", text: signed(p.instances_b - p.instances_a, count) }), " ", className(p["class"]),
                        h("span", { cls: "hk-muted", text: " (" + count(p.instances_a) + " \u2192 " + count(p.instances_b) + ")" })]),
        h("ol", { cls: "hk-growth-path" }, p.path.map(function (hop) {
          return typeof hop === "number" ? h("li", { cls: "hk-muted", text: "\u22ee " + plural(hop, "hop") + " left out" })
                                         : h("li", null, h("code", { text: hop }));
        }))]));
    });
    el.appendChild(h("h3", { text: "Where the growth hangs" + (data.paths_sampled ? " (sampled)" : "") }));
    el.appendChild(h("p", { cls: "hk-muted", text: "The shortest path from a GC root of each object of the classes " +
      "that grew most, named without addresses; objects on the same path are counted in both dumps." }));
    el.appendChild(list);
    if (data.more_paths) el.appendChild(h("p", { cls: "hk-muted", text: "and " + plural(data.more_paths, "more path") }));
  };

  // ---- the report page ------------------------------------------------------

  var SECTIONS = [
    ["overview", "Overview", null],
    // With a baseline, what changed is why the page was asked for: right after the overview.
    ["diff", "Diff", "Classes that changed since the baseline dump."],
    ["suspects", "Leak suspects", "As Eclipse MAT finds them: a single object keeping a large share of the heap alive."],
    ["leaks", "Leak traces", "As LeakCanary reports them, one trace per fingerprint: the references between the last " +
                             "object not leaking and the first leaking one (underlined) are the suspects."],
    ["histogram", "Histogram", "Objects per class. Retained: what the class's objects keep alive together " +
                               "(those no other object of the class dominates)."],
    ["unreachable", "Unreachable objects", "Objects no GC root reaches through any reference: garbage the dump " +
                                           "kept (jmap -dump without live), by class."],
    ["bitmaps", "Bitmaps", "Android's android.graphics.Bitmap objects, largest first, as thumbnails of their pixels."],
    ["domtree", "Dominator tree", "What each object keeps alive, largest retained first: open a node to see what it " +
                                  "dominates, click an object for its path from a GC root."],
    ["flame", "Flame graph", "The class tree: retained sizes down the dominator tree folded by class path. Hover a " +
                             "frame for its size, click to zoom and list its objects, search to highlight a class."],
    ["threads", "Threads", "Each thread's stack as jstack prints it, with the objects each frame holds; " +
                           "largest retained first, a thread retaining what only its stack holds."],
    ["waste", "Waste", "Memory held for nothing: the same text in many Strings, collections' unused slots, " +
                       "large primitive arrays."]];

  hk.views.report = function (el, data, ctx) {
    var nav = h("nav", { cls: "hk-nav" });
    var main = h("main", { cls: "hk-main" });
    SECTIONS.forEach(function (sec) {
      var part = data.sections[sec[0]];
      if (part == null) return;
      nav.appendChild(h("a", { attrs: { href: "#hk-" + sec[0] }, text: sec[1] }));
      var body = h("div", { cls: "hk-section-body" });
      main.appendChild(section(sec[0], sec[1], sec[2], body));
      drawView(sec[0], body, part, ctx);
    });
    if (data.shortened) main.insertBefore(h("p", { cls: "hk-card hk-note", text: "The lists of this report were " +
      "shortened to keep the page under its size limit." }), main.firstChild);
    append(el, [
      h("header", { cls: "hk-top" }, [
        h("div", { cls: "hk-brand" }, [h("span", { cls: "hk-logo", text: "hprofkit" }),
                                       h("span", { cls: "hk-title", text: data.title })]),
        nav]),
      main,
      h("footer", { cls: "hk-foot hk-muted", text: data.generator + " \u00b7 " + data.created }) ]);
  };

  // ---- the dominator tree and its flame graph (heap.dominator_tree(), heap.flamegraph()) ----

  /* The rows of tree.py's document as nodes linked to their children; returns the roots. */
  function treeRoots(data) {
    var nodes = data.nodes.map(function (r, i) {
      return { i: i, label: r[0], id: r[1], retained: r[2], shallow: r[3], parent: r[4], hidden: r[5],
               hiddenBytes: r[6], kids: [] };
    });
    var roots = [];
    nodes.forEach(function (n) { (n.parent < 0 ? roots : nodes[n.parent].kids).push(n); });
    return roots;
  }

  function hiddenNote(count, size) {
    return count > 0 ? h("li", { cls: "hk-tmore hk-muted",
                                 text: "and " + plural(count, "more object") + " retaining " + bytes(size) }) : null;
  }

  hk.views.domtree = function (el, data, ctx) {
    var rows = data.rows && ctx ? data.rows : null;  // the report's: each node's object row, for its path
    function level(nodes, hidden, hiddenBytes) {
      return h("ul", { cls: "hk-tlevel" }, nodes.map(node).concat([hiddenNote(hidden, hiddenBytes)]));
    }
    function node(n) {
      var expandable = n.kids.length > 0;
      var list = null;
      var li = h("li", { cls: "hk-tnode", data: { id: n.id } });
      var toggle = h("button", { cls: "hk-ttoggle", text: expandable ? "\u25b8" : "\u00b7",
                                 attrs: { type: "button", "aria-expanded": expandable ? "false" : null,
                                          disabled: expandable ? null : "disabled" } });
      var fill = h("span");
      fill.style.width = (data.total ? (100 * n.retained) / data.total : 0).toFixed(2) + "%";
      var details = null;
      var label = className(n.label);
      if (rows) {  // a click on the object shows its card and path from a GC root, a second hides it
        label = h("button", { cls: "hk-tobj", attrs: { type: "button" }, title: "Show the path from a GC root",
                              on: { click: function () {
                                if (details) { li.removeChild(details); details = null; return; }
                                details = objectDetails(ctx, rows[n.i]);
                                li.insertBefore(details, li.children[1] || null);
                              } } }, label);
      }
      toggle.addEventListener("click", function () {
        var open = toggle.getAttribute("aria-expanded") !== "true";
        if (open && !list) li.appendChild((list = level(n.kids, n.hidden, n.hiddenBytes)));
        list.hidden = !open;
        toggle.textContent = open ? "\u25be" : "\u25b8";
        toggle.setAttribute("aria-expanded", String(open));
      });
      li.appendChild(h("div", { cls: "hk-trow" }, [
        toggle, h("span", { cls: "hk-tbar" }, fill),
        figure("span", n.retained, bytes, "hk-tsize"), " ", label,
        " ", h("span", { cls: "hk-id", text: "@0x" + n.id }),
        expandable || !n.hidden ? null : h("span", { cls: "hk-muted hk-tdeeper", title: "Not in this page: " +
          "heap.dominator_tree(root=heap.object(0x" + n.id + ")) in a notebook, or hprofkit serve, open it",
          text: " (" + plural(n.hidden, "child", "children") + " below, " + bytes(n.hiddenBytes) +
                ", deeper than this page goes)" })]));
      return li;
    }
    append(el, [
      h("p", { cls: "hk-muted", text: "The dominator tree: " + plural(data.roots, "object") + " under " +
        (data.root ? "0x" + data.root : "the virtual root") + ", retaining " + bytes(data.total) + ". Click \u25b8 " +
        "to open a node; this view holds its top " + plural(data.depth, "level") + ": " +
        "heap.dominator_tree(root=obj) in a notebook, or hprofkit serve, go on from any node." }),
      level(treeRoots(data), data.hidden[0], data.hidden[1])]);
  };

  /* The class tree (tree.py's class_tree_data) as an icicle: a frame per class path, its width the retained
   * size.  A click zooms on a frame and lists its largest objects; the search box highlights a class. */
  hk.views.flame = function (el, data) {
    var ROW = 20;
    var nodes = data.nodes.map(function (r, i) {
      return { i: i, label: r[0], id: r[1], retained: r[2], shallow: r[3], parent: r[4], hidden: r[5],
               hiddenBytes: r[6], objects: r[7], top: r[8], kids: [] };
    });
    var all = { label: "all", id: null, retained: data.total, kids: [], depth: 0, x0: 0,
                hidden: data.hidden[0], hiddenBytes: data.hidden[1] };
    nodes.forEach(function (n) { (n.parent < 0 ? all : nodes[n.parent]).kids.push(n); });
    var flat = [all];
    (function place(n) {
      var x = n.x0;
      // What the document leaves out, as one grey frame after the children shown.
      if (n.hidden > 0 && n.hiddenBytes > 0)
        n.kids = n.kids.concat([{ label: plural(n.hidden, "more class", "more classes"), id: null,
                                  retained: n.hiddenBytes, kids: [], rest: true }]);
      n.kids.forEach(function (k) {
        k.x0 = x;
        k.depth = n.depth + 1;
        k.up = n;
        x += k.retained;
        flat.push(k);
        place(k);
      });
    })(all);
    var rows = flat.reduce(function (m, n) { return Math.max(m, n.depth); }, 0) + 1;
    var width = Math.max(320, Math.min(el.clientWidth || 1000, 1200));
    var svg = s("svg", { width: width, height: rows * ROW, "class": "hk-flame", role: "img" });
    var caption = h("p", { cls: "hk-muted" });
    var found = h("span", { cls: "hk-muted hk-fstatus" });
    var query = "";
    var search = h("input", {
      cls: "hk-filter hk-fsearch", attrs: { type: "search", placeholder: "Highlight a class (text or regular expression)",
                                           "aria-label": "Highlight a class" },
      on: { input: function () { query = search.value.trim(); draw(current); } } });
    var objects = h("div", { cls: "hk-fobjects" });
    var current = all;
    function matcher() {
      if (!query) return null;
      var re = null;
      try { re = new RegExp(query, "i"); } catch (e) { re = null; }
      var lower = query.toLowerCase();
      // As text first: a class name's "$" or "." would mean something else to a regular expression.
      return function (label) { return label.toLowerCase().indexOf(lower) >= 0 || (re !== null && re.test(label)); };
    }
    /* The focused frame's largest objects: the object level, one click from the class level. */
    function listObjects(n) {
      clear(objects);
      if (n === all) return;
      append(objects, [
        h("h4", { text: n.label + ": " + plural(n.objects, "object") + ", " + bytes(n.shallow) + " shallow, " +
                        bytes(n.retained) + " retained" + (n.top.length < n.objects ? "; the largest:" : "") }),
        h("ul", { cls: "hk-held" }, n.top.map(function (o) {
          return h("li", { data: { id: o[1] } }, [className(o[0]), " ", h("span", { cls: "hk-id", text: "@0x" + o[1] }),
            h("span", { cls: "hk-size", text: " " + bytes(o[2]) + " retained" })]);
        }))]);
    }
    function draw(focus) {
      clear(svg);
      current = focus;
      var match = matcher();
      var hits = 0, hitBytes = 0;
      var scale = focus.retained ? width / focus.retained : 0;
      flat.forEach(function (n) {
        var hit = match && n !== all && !n.rest && match(n.label);
        if (hit) {
          hits++;
          // A class under a matching frame is inside its retained size already: count the outermost only.
          for (var u = n.up; u && u !== all; u = u.up) if (match(u.label)) break;
          if (!u || u === all) hitBytes += n.retained;
        }
        var inside = n.x0 + n.retained > focus.x0 && n.x0 < focus.x0 + focus.retained;
        var above = n.depth < focus.depth;
        if (!inside || !n.retained) return;
        var x = above ? 0 : (n.x0 - focus.x0) * scale;
        var w = above ? width : n.retained * scale;
        if (w < 0.5) return;
        var g = s("g", { "class": "hk-fnode" + (n === focus ? " hk-focus" : "") + (n.rest ? " hk-frest" : "") +
                                  (hit ? " hk-fmatch" : match ? " hk-fdim" : ""),
                         "data-id": n.id || "" });
        var rect = s("rect", { x: x, y: n.depth * ROW, width: Math.max(w - 1, 0.5), height: ROW - 1, rx: 2,
                               fill: n === all ? "#8a94a6" : n.rest ? "#d5d9e2"
                                 : hit ? "#c2410c" : PALETTE[(n.depth + n.label.length) % PALETTE.length] });
        var title = s("title");
        title.textContent = n.label + ": " + (n === all || n.rest ? "" : plural(n.objects, "object") + ", ") +
          bytes(n.retained) + " retained (" + percent(n.retained, data.total) + ")";
        g.appendChild(rect);
        g.appendChild(title);
        if (w > 40) {
          var t = s("text", { x: x + 4, y: n.depth * ROW + 14 });
          var label = (n === all || n.rest ? n.label : simpleName(n.label)) + " " + bytes(n.retained);
          var fit = Math.floor((w - 8) / 7);
          t.textContent = label.length > fit ? label.slice(0, Math.max(fit - 1, 1)) + "\u2026" : label;
          g.appendChild(t);
        }
        if (!n.rest) g.addEventListener("click", function () { draw(n === focus ? (n.up || all) : n); });
        svg.appendChild(g);
      });
      caption.textContent = focus === all
        ? "The class tree: the dominator tree folded by class path, each frame a path of classes, its width what " +
          "its objects retain. Click a frame to zoom in and list its largest objects."
        : "Zoomed on " + focus.label + " (" + bytes(focus.retained) + "): click it to zoom out, or \u201call\u201d.";
      found.textContent = match ? plural(hits, "frame") + " match, retaining " + bytes(hitBytes) +
                                  " (" + percent(hitBytes, data.total) + ")" : "";
      el.dataset.focus = focus.id || "";
      listObjects(focus);
    }
    append(el, [h("div", { cls: "hk-toolbar" }, [search, found]), caption, svg, objects]);
    draw(all);
  };

  // ---- threads and waste ----------------------------------------------------

  /* Objects as one line each (rows of the object table), and how many more there are. */
  function heldList(ctx, rows, more) {
    if (!rows.length) return null;
    return h("ul", { cls: "hk-held" }, rows.map(function (row) {
      var o = ctx.object(row);
      return h("li", null, [objectLabel(o), h("span", { cls: "hk-size", text: " " + bytes(o.retained) + " retained" })]);
    }).concat(more ? [h("li", { cls: "hk-muted", text: "and " + plural(more, "more object") })] : []));
  }

  function restNote(rest, noun, nouns, extra) {
    return rest.rows ? h("p", { cls: "hk-muted hk-rest", text: "and " + plural(rest.rows, noun, nouns) + " not listed" +
                                                                  (extra ? ": " + extra : "") + "." }) : null;
  }

  hk.views.threads = function (el, data, ctx) {
    el.appendChild(h("p", { cls: "hk-lead" }, [figure("b", data.total_rows, count),
                                              " thread" + (data.total_rows === 1 ? "" : "s") + " in the dump."]));
    data.rows.forEach(function (t) {
      var o = t[3] == null ? null : ctx.object(t[3]);
      var stack = h("ol", { cls: "hk-stack-frames" }, t[5].map(function (f) {
        if (typeof f === "number") return h("li", { cls: "hk-muted hk-skip", text: "\u22ee " + plural(f, "frame") + " left out" });
        return h("li", { cls: "hk-frame" }, [h("code", { text: "at " + f[0] }), heldList(ctx, f[1], f[2])]);
      }));
      el.appendChild(h("details", { cls: "hk-card hk-thread", data: { name: t[0] == null ? "" : t[0], frames: t[4] } }, [
        h("summary", null, [h("b", { cls: "hk-thread-name", text: t[0] == null ? "(no name)" : t[0] }),
          t[1] ? h("span", { cls: "hk-badge", text: "daemon" }) : null, " ",
          figure("span", t[2], bytes), h("span", { cls: "hk-muted", text: " retained \u00b7 " + plural(t[4], "frame") }),
          o ? [" ", h("span", { cls: "hk-id", text: "@0x" + o.id })] : null]),
        t[8].length ? [h("h4", { text: "Retains, largest first" }), heldList(ctx, t[8], t[9])] : null,
        t[4] ? stack : h("p", { cls: "hk-muted", text: "The dump holds no stack for this thread." }),
        t[6].length ? [h("h4", { text: "Held outside its frames" }), heldList(ctx, t[6], t[7])] : null]));
    });
    var extra = data.rest.rows ? bytes(data.rest.retained_size) + " retained" : "";
    append(el, restNote(data.rest, "more thread", null, extra));
  };

  // One kind of heap.waste(): its figures in the summary; opened, its objects and the fields holding them.
  function wasteKind(k, ctx) {
    return h("details", { cls: "hk-more-details hk-waste-kind", data: { kind: k.kind } }, [
      h("summary", { text: k.kind + ": " + k.objects.toLocaleString("en-US") + " objects, " + bytes(k.wasted_bytes) }),
      h("h4", { text: "Held by" }),
      h("ul", { cls: "hk-waste-holders" }, k.holders.map(function (r) {
        return h("li", { data: { objects: r[1], wasted: r[2] } },
                 [h("code", { text: r[0] }), " " + r[1].toLocaleString("en-US") + " objects, " + bytes(r[2])]);
      })),
      h("h4", { text: "Largest" }),
      h("ul", { cls: "hk-waste-items" }, k.items.map(function (r) {
        return h("li", { data: { wasted: r[1] } }, [objectLabel(ctx.object(r[0])), " " + bytes(r[1])]);
      }))]);
  }

  hk.views.waste = function (el, data, ctx) {
    var strings = data.strings;
    var collections = data.collections;
    var arrays = data.arrays;
    var kinds = (data.kinds || []).filter(function (k) { return k.objects > 0; });
    append(el, [
      h("h3", { text: "Waste by kind: " + bytes(data.total_bytes || 0) + " (each object once)" }),
      kinds.length ? h("div", { cls: "hk-waste-kinds" }, kinds.map(function (k) { return wasteKind(k, ctx); }))
        : h("p", { cls: "hk-muted", text: "No waste found." }),
      strings ? mat(strings, collections, arrays, ctx) : null]);
  };

  // MAT's waste queries (the report only: a notebook's Waste shows the kinds).
  function mat(strings, collections, arrays, ctx) {
    return h("div", {}, [
      h("h3", { cls: "hk-spaced", text: "Duplicate Strings" }),
      strings.rows.length ? dataTable([
        { label: "Text", get: function (r) { return r[0]; }, render: function (r) { return h("code", { cls: "hk-str", text: r[0] }); } },
        { label: "Strings", num: true, get: function (r) { return r[1]; } },
        { label: "Wasted", num: true, fmt: bytes, get: function (r) { return r[2]; } }], strings.rows, {
        sort: 2, filter: function (r) { return r[0]; }, placeholder: "Filter texts", noun: "text", name: "duplicate-strings",
        page: 50, footer: restNote(strings.rest, "more text", null, strings.rest.rows ? bytes(strings.rest.wasted_bytes) +
                                                                                   " wasted" : "") })
        : h("p", { cls: "hk-muted", text: "No text is held by two Strings or more." }),
      h("h3", { cls: "hk-spaced", text: "Collections" }),
      collections.rows.length ? dataTable([
        { label: "Class", get: function (r) { return r[0]; }, render: function (r) { return className(r[0]); } },
        { label: "Instances", num: true, get: function (r) { return r[2]; } },
        { label: "Empty", num: true, get: function (r) { return r[3]; } },
        { label: "Mean fill", num: true, get: function (r) { return r[4]; },
          render: function (r) { return figure("span", r[4], function (v) { return percent(v, 1); }); } },
        { label: "Wasted", num: true, fmt: bytes, get: function (r) { return r[5]; } }], collections.rows, {
        sort: 4, filter: function (r) { return r[0]; }, placeholder: "Filter classes", noun: "class", nouns: "classes",
        name: "collections", page: 50, footer: restNote(collections.rest, "more class", "more classes",
          collections.rest.rows ? bytes(collections.rest.wasted_bytes) + " wasted" : "") })
        : h("p", { cls: "hk-muted", text: "No collection hprofkit knows." }),
      h("h3", { cls: "hk-spaced", text: "Primitive arrays of " + bytes(arrays.min_bytes) + " or more" }),
      arrays.rows.length ? dataTable([
        { label: "Array", get: function (r) { return ctx.object(r[0]).id; },
          render: function (r) { return objectLabel(ctx.object(r[0])); } },
        { label: "Size", num: true, fmt: bytes, get: function (r) { return r[1]; } }], arrays.rows, {
        sort: 1, noun: "array", name: "large-arrays", page: 50,
        footer: restNote(arrays.rest, "more array", null, arrays.rest.rows ? bytes(arrays.rest.bytes) : "") })
        : h("p", { cls: "hk-muted", text: "None." })]);
  }

  function drawView(name, el, data, ctx) {
    try {
      hk.views[name](el, data, ctx);
    } catch (err) {
      clear(el);
      el.appendChild(h("p", { cls: "hk-error", text: "This view could not be drawn: " + err }));
      console.error("hprofkit: view " + name + ":", err);
    }
  }

  // ---- mounting -------------------------------------------------------------

  hk.mount = function (root) {
    var found = (root || document).querySelectorAll("script[type='application/json'][data-hprofkit-view]");
    Array.prototype.forEach.call(found, function (script) {
      if (script.dataset.hprofkitMounted) return;
      script.dataset.hprofkitMounted = "1";
      var target = document.getElementById(script.dataset.hprofkitTarget || "");
      var name = script.dataset.hprofkitView;
      if (!target || !hk.views[name]) {
        console.error("hprofkit: no element or no view for", name);
        return;
      }
      var data;
      try {
        data = JSON.parse(script.textContent);
      } catch (err) {
        target.appendChild(h("p", { cls: "hk-error", text: "The report's data is damaged: " + err }));
        console.error("hprofkit: bad data:", err);
        return;
      }
      clear(target);
      drawView(name, target, data, new Context(data));
    });
    document.documentElement.dataset.hprofkitReady = "1";
    if (window.performance && performance.mark) performance.mark("hprofkit-ready");
  };

  hk.format = { bytes: bytes, count: count, percent: percent };

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", function () { hk.mount(); });
  else hk.mount();
})();
