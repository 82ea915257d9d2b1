// memorepair show: fills the details panel from the page's own JSON (no network).
// Every text goes in through textContent, never as markup.
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("cascade-data").textContent);
  var panel = document.getElementById("details");

  function el(tag, cls, text) {
    var node = document.createElement(tag);
    if (cls) { node.className = cls; }
    if (text !== undefined) { node.textContent = text; }
    return node;
  }

  function facts(list) {
    var dl = el("dl");
    list.forEach(function (pair) {
      dl.appendChild(el("dt", "", pair[0]));
      dl.appendChild(el("dd", "", pair[1]));
    });
    return dl;
  }

  function change(d) {
    var box = el("div", "change");
    box.appendChild(el("h3", "", "Content change"));
    if (d.erased) {
      box.appendChild(el("p", "erased", "erased: the graph holds an erasure, not the withdrawn content"));
    }
    if (d.after_erased) {
      box.appendChild(el("p", "erased", "erased: the successor's content is no longer held"));
    }
    if (!d.has_after && !d.after_erased) {
      box.appendChild(el("p", "", "no successor: nothing replaces this version"));
    }
    var pre = el("div", "diff");
    d.diff.forEach(function (run) {
      var tag = run[0] === "-" ? "del" : run[0] === "+" ? "ins" : "span";
      pre.appendChild(el(tag, "", run[1]));
    });
    if (d.diff.length) { box.appendChild(pre); }
    return box;
  }

  function show(id) {
    var d = data[id];
    if (!d) { return; }
    document.querySelectorAll("svg .node.active").forEach(function (n) { n.classList.remove("active"); });
    document.getElementById(id).classList.add("active");
    panel.replaceChildren(el("h2", "", d.title), facts(d.facts));
    if (d.group) {
      panel.appendChild(el("h3", "", "Members"));
      var ul = el("ul");
      d.members.forEach(function (m) { ul.appendChild(el("li", "", m)); });
      if (d.more) { ul.appendChild(el("li", "", "... and " + d.more + " more")); }
      panel.appendChild(ul);
    } else {
      panel.appendChild(change(d));
    }
  }

  document.querySelectorAll("svg .node").forEach(function (node) {
    node.addEventListener("click", function () { show(node.id); });
    node.addEventListener("keydown", function (event) {
      if (event.key === "Enter" || event.key === " ") { event.preventDefault(); show(node.id); }
    });
  });
  // A link may name the node to open: page.html#uid=sum-zurich
  var wanted = decodeURIComponent((window.location.hash.match(/^#uid=(.+)$/) || [])[1] || "");
  document.querySelectorAll("svg .node[data-uid]").forEach(function (node) {
    if (node.getAttribute("data-uid") === wanted) { show(node.id); }
  });
  document.body.setAttribute("data-ready", "true");
})();
