// The provenance viewer's page script: three panels (pre-grad graph, post-grad graph, generated
// code) and the model lines above them; choosing a line in any of them highlights its relatives in
// the others, as tlparse's --inductor-provenance highlighter does. DATA (analysis/provenance.py
// Provenance.as_json) and SELECTION ({kind, name}) are set by the page before this runs.
(function () {
  const PANELS = [["pre", "pre_grad_graph"], ["post", "post_grad_graph"], ["kernel", "output_code"]];
  const byLine = {};   // kind -> line number -> item name
  const elems = {};    // kind -> [line elements]

  // graph lines without FX's 8-space indent, and `# File:` comments with the file's name only: the
  // panels are narrow at 1280 px, and the full comment is the line's tooltip
  function shown(key, text) {
    if (key === "output_code") return text;
    const m = text.match(/^\s*#\s*File:\s*(.+?):(\d+) in ([^,]+), code: (.*)$/);
    if (m) return `# ${m[1].split("/").pop()}:${m[2]}  ${m[4].trim()}`;
    return text.startsWith("        ") ? text.slice(8) : text.replace(/^\s+(?=(class|def) )/, "");
  }

  function build() {
    for (const [kind, key] of PANELS) {
      const panel = DATA.panels[key];
      const box = document.querySelector(`#p-${kind} .body`);
      const owner = {};
      for (const [name, lines] of Object.entries(panel.items)) for (const n of lines) owner[n] = name;
      byLine[kind] = owner;
      const frag = document.createDocumentFragment();
      const list = [];
      const recorded = !(panel.lines.length === 1 && panel.lines[0] === "");
      (recorded ? panel.lines : []).forEach((text, i) => {
        const n = i + 1;
        const div = document.createElement("div");
        div.className = "l";
        div.dataset.n = n;
        if (owner[n] !== undefined) { div.classList.add("item"); div.dataset.name = owner[n]; }
        if (panel.model[n] !== undefined) { div.classList.add("src"); div.dataset.line = panel.model[n]; }
        const num = document.createElement("span");
        num.className = "n";
        num.textContent = n;
        div.appendChild(num);
        div.appendChild(document.createTextNode(shown(key, text)));
        if (panel.model[n] !== undefined) div.title = text.trim();
        frag.appendChild(div);
        list.push(div);
      });
      box.appendChild(frag);
      elems[kind] = list;
      box.addEventListener("click", (e) => {
        const div = e.target.closest(".l");
        if (!div) return;
        if (div.dataset.name !== undefined) select(kind, div.dataset.name);
        else if (div.dataset.line !== undefined) select("line", div.dataset.line);
      });
    }
    const model = document.querySelector("#model .body");
    if (!Object.keys(DATA.model).length) {
      model.innerHTML = '<div class="missing">No model line is known for this graph: its FX nodes carry no ' +
        "<code># File:</code> comments (no stack traces: a module built outside Python source, or a compiled " +
        "autograd graph) and no kernel stack traces were recorded.</div>";
    }
    for (const [key, m] of Object.entries(DATA.model)) {
      const row = document.createElement("div");
      row.className = "m";
      row.dataset.line = key;
      const where = document.createElement("span");
      where.className = "where";
      where.textContent = `${m.file.split("/").pop()}:${m.line}`;
      where.title = m.file;
      row.appendChild(where);
      row.appendChild(document.createTextNode(m.code || ""));
      row.addEventListener("click", () => select("line", key));
      model.appendChild(row);
    }
  }

  // the same walk as Provenance.related in analysis/provenance.py
  function related(kind, name) {
    const out = {kernel: new Set(), post: new Set(), pre: new Set(), line: new Set()};
    const nodeLines = (panel) => {
      const m = {};
      for (const [node, lines] of Object.entries(panel.items))
        m[node] = new Set(lines.filter((n) => panel.model[n] !== undefined).map((n) => panel.model[n]));
      return m;
    };
    const preLines = nodeLines(DATA.panels.pre_grad_graph), postLines = nodeLines(DATA.panels.post_grad_graph);
    if (kind === "line") {
      out.line.add(name);
      for (const [n, ls] of Object.entries(preLines)) if (ls.has(name)) out.pre.add(n);
      for (const [n, ls] of Object.entries(postLines)) if (ls.has(name)) out.post.add(n);
      for (const [k, ls] of Object.entries(DATA.kernelLines)) if (ls.includes(name)) out.kernel.add(k);
      for (const [pre, post, k] of DATA.links) if (k && (out.pre.has(pre) || out.post.has(post))) out.kernel.add(k);
      return out;
    }
    out[kind].add(name);
    for (const [pre, post, k] of DATA.links) {
      if ({kernel: k, post: post, pre: pre}[kind] === name) { out.pre.add(pre); out.post.add(post); out.kernel.add(k); }
    }
    if (kind === "pre") for (const [, post, k] of DATA.links) if (out.post.has(post)) out.kernel.add(k);
    for (const s of Object.values(out)) s.delete(null);
    for (const k of out.kernel) for (const l of DATA.kernelLines[k] || []) out.line.add(l);
    for (const n of out.pre) for (const l of preLines[n] || []) out.line.add(l);
    for (const n of out.post) for (const l of postLines[n] || []) out.line.add(l);
    return out;
  }

  function select(kind, name) {
    const r = related(kind, name);
    document.querySelectorAll(".hl, .sel").forEach((e) => e.classList.remove("hl", "sel"));
    for (const [k] of PANELS) {
      let first = null;
      for (const div of elems[k]) {
        const hit = (div.dataset.name !== undefined && r[k].has(div.dataset.name)) ||
                    (div.dataset.line !== undefined && !div.dataset.name && r.line.has(div.dataset.line));
        if (hit) {
          div.classList.add(k === kind && div.dataset.name === name ? "sel" : "hl");
          if (first === null) first = div;
        }
      }
      const box = document.querySelector(`#p-${k} .body`);
      if (first) box.scrollTop = Math.max(0, first.offsetTop - box.offsetTop - 24);
      document.querySelector(`#p-${k} .count`).textContent = r[k].size ? `${r[k].size} lit` : "";
    }
    let firstModel = null;
    document.querySelectorAll("#model .m").forEach((row) => {
      if (r.line.has(row.dataset.line)) {
        row.classList.add(kind === "line" && row.dataset.line === name ? "sel" : "hl");
        firstModel = firstModel || row;
      }
    });
    const mbox = document.querySelector("#model .body");
    if (firstModel) mbox.scrollTop = Math.max(0, firstModel.offsetTop - mbox.offsetTop - 4);
    const what = {kernel: "kernel", post: "post-grad node", pre: "pre-grad node", line: "model line"}[kind];
    document.getElementById("chosen").textContent =
      `${what} ${name}: ${r.kernel.size} kernels, ${r.post.size} post-grad and ${r.pre.size} pre-grad nodes, ` +
      `${r.line.size} model lines`;
    shareLink(kind, name);
  }

  // the page's own address with this selection: the view, shared by its URL
  function shareLink(kind, name) {
    const a = document.getElementById("share");
    try {
      const url = new URL(window.parent.location.href);
      for (const p of ["kernel", "line", "node"]) url.searchParams.delete(p);
      if (kind === "kernel") url.searchParams.set("kernel", name);
      else if (kind === "line") url.searchParams.set("line", name);
      else url.searchParams.set("node", `${kind}:${name}`);
      url.searchParams.set("tab", TAB);
      a.href = url.toString();
      a.style.display = "";
    } catch (e) {
      a.style.display = "none";
    }
  }

  build();
  if (SELECTION) select(SELECTION.kind, SELECTION.name);
})();
