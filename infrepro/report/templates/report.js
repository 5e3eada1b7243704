/* infrepro report: sortable tables and collapsible sections; nothing is fetched. */
(function () {
  "use strict";

  function sortKey(cell) {
    var value = cell.getAttribute("data-v");
    return value === null ? null : parseFloat(value);
  }

  function compare(a, b, index) {
    var x = a.cells[index], y = b.cells[index];
    var kx = sortKey(x), ky = sortKey(y);
    if (kx !== null && ky !== null) { return kx - ky; }
    if (kx !== null) { return -1; }
    if (ky !== null) { return 1; }
    return x.textContent.localeCompare(y.textContent, undefined, { numeric: true });
  }

  function sortBy(th) {
    var row = th.parentNode;
    var body = th.closest("table").tBodies[0];
    var index = Array.prototype.indexOf.call(row.children, th);
    var ascending = th.getAttribute("aria-sort") !== "ascending";
    Array.prototype.forEach.call(row.children, function (h) { h.removeAttribute("aria-sort"); });
    th.setAttribute("aria-sort", ascending ? "ascending" : "descending");
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var order = compare(a, b, index);
      return ascending ? order : -order;
    });
    rows.forEach(function (r) { body.appendChild(r); });
  }

  document.querySelectorAll("button[data-copy]").forEach(function (button) {
    button.addEventListener("click", function () {
      var source = document.getElementById(button.getAttribute("data-copy"));
      if (source && navigator.clipboard) {
        navigator.clipboard.writeText(source.textContent).then(function () {
          button.textContent = "Copied";
        });
      }
    });
  });

  document.querySelectorAll("table.sortable thead th").forEach(function (th) {
    th.tabIndex = 0;
    th.addEventListener("click", function () { sortBy(th); });
    th.addEventListener("keydown", function (event) {
      if (event.key === "Enter" || event.key === " ") { event.preventDefault(); sortBy(th); }
    });
  });

  document.querySelectorAll("[data-toggle-all]").forEach(function (button) {
    button.addEventListener("click", function () {
      var open = button.getAttribute("data-toggle-all") === "open";
      document.querySelectorAll("details").forEach(function (d) { d.open = open; });
    });
  });

  function reveal() {
    var target = location.hash && document.getElementById(decodeURIComponent(location.hash.slice(1)));
    for (var node = target; node; node = node.parentElement) {
      if (node.tagName === "DETAILS") { node.open = true; }
    }
  }
  window.addEventListener("hashchange", reveal);
  reveal();
})();
