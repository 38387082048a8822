// heapest's page: table sorting and filtering, the --by switcher, the
// flame graph's tooltip and zoom. Plain JavaScript on the elements the
// page already holds; it creates no element but the tooltip's text and
// fetches nothing.
"use strict";
(function () {
  var table = document.getElementById("rows");
  var body = table.tBodies[0];
  var heads = table.tHead.rows[0].cells;

  // Sorting: numbers by their unrounded value (data-v), keys by text.
  function sortBy(col, numeric, desc) {
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var x = a.cells[col], y = b.cells[col];
      var c;
      if (numeric) {
        var u = x && x.dataset.v !== undefined ? parseFloat(x.dataset.v) : -Infinity;
        var v = y && y.dataset.v !== undefined ? parseFloat(y.dataset.v) : -Infinity;
        c = u - v;
      } else {
        c = (x ? x.textContent : "").localeCompare(y ? y.textContent : "");
      }
      return desc ? -c : c;
    });
    rows.forEach(function (r) { body.appendChild(r); });
  }
  Array.prototype.forEach.call(heads, function (th, col) {
    th.addEventListener("click", function () {
      var desc = !th.classList.contains("sorted-desc");
      Array.prototype.forEach.call(heads, function (h) { h.classList.remove("sorted-desc", "sorted-asc"); });
      th.classList.add(desc ? "sorted-desc" : "sorted-asc");
      sortBy(col, th.classList.contains("num"), desc);
    });
  });

  // Filtering: a regular expression when the text is one, else a
  // substring, matched against the row's key, case-insensitively.
  var filter = document.getElementById("filter");
  var shown = document.getElementById("shown");
  function applyFilter() {
    var text = filter.value, re = null;
    try { re = new RegExp(text, "i"); } catch (e) { re = null; }
    var n = 0;
    Array.prototype.forEach.call(body.rows, function (r) {
      var key = r.cells[0].textContent;
      var ok = text === "" || (re ? re.test(key) : key.toLowerCase().indexOf(text.toLowerCase()) >= 0);
      r.hidden = !ok;
      if (ok) n++;
    });
    shown.textContent = n + " of " + body.rows.length + " rows";
  }
  filter.addEventListener("input", applyFilter);
  applyFilter();

  // The --by switcher (heapest web): the page asks for itself again.
  var by = document.getElementById("by");
  if (by) {
    by.addEventListener("change", function () { by.form.submit(); });
  }

  // The flame graph.
  var svg = document.querySelector("svg.flame");
  if (!svg) return;
  var width = svg.viewBox.baseVal.width;
  var frames = Array.prototype.slice.call(svg.querySelectorAll("g.frame"));
  var tip = document.getElementById("tip");
  var charW = 6.6;

  function nameOf(g) { return g.querySelector("title").textContent.split("\n")[0]; }

  // zoom shows [x0, x0+w) of the total across the whole width.
  function zoom(x0, w) {
    frames.forEach(function (g) {
      var x = (parseFloat(g.dataset.x) - x0) / w;
      var fw = parseFloat(g.dataset.w) / w;
      var l = Math.max(0, x), r = Math.min(1, x + fw);
      if (r <= l + 1e-9) { g.style.display = "none"; return; }
      g.style.display = "";
      var rect = g.querySelector("rect"), label = g.querySelector("text");
      rect.setAttribute("x", (l * width).toFixed(1));
      rect.setAttribute("width", ((r - l) * width).toFixed(1));
      label.setAttribute("x", (l * width + 3).toFixed(1));
      var fit = Math.floor(((r - l) * width - 6) / charW), name = nameOf(g);
      label.textContent = fit < 3 ? "" : name.length <= fit ? name : name.slice(0, fit - 1) + "\u2026";
    });
  }
  frames.forEach(function (g) {
    var title = g.querySelector("title").textContent;
    g.addEventListener("click", function () {
      if (g.dataset.d === "0") zoom(0, 1);
      else zoom(parseFloat(g.dataset.x), parseFloat(g.dataset.w));
    });
    g.addEventListener("mousemove", function (e) {
      tip.textContent = title;
      tip.hidden = false;
      tip.style.left = Math.max(4, Math.min(e.clientX + 12, window.innerWidth - tip.offsetWidth - 4)) + "px";
      tip.style.top = (e.clientY + 14) + "px";
    });
    g.addEventListener("mouseleave", function () { tip.hidden = true; });
  });
})();
