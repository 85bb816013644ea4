(function () {
  "use strict";
  // Severity filter: each checkbox shows or hides the finding rows of its severity.
  var boxes = document.querySelectorAll(".filters input[data-sev]");
  function apply() {
    var show = {};
    boxes.forEach(function (b) { show[b.dataset.sev] = b.checked; });
    document.querySelectorAll(".finding").forEach(function (f) {
      f.classList.toggle("hidden", !show[f.dataset.sev]);
    });
    document.querySelectorAll(".host").forEach(function (h) {
      var any = h.querySelector(".finding:not(.hidden)") !== null || h.querySelector(".finding") === null;
      h.classList.toggle("dim", !any);
    });
  }
  boxes.forEach(function (b) { b.addEventListener("change", apply); });
  apply();

  // Copy buttons next to each fix.
  document.querySelectorAll(".fix button").forEach(function (btn) {
    btn.addEventListener("click", function (ev) {
      ev.preventDefault();
      var text = btn.parentElement.querySelector("pre").textContent;
      var done = function () { btn.textContent = "copied"; setTimeout(function () { btn.textContent = "copy"; }, 1200); };
      if (navigator.clipboard && navigator.clipboard.writeText) {
        navigator.clipboard.writeText(text).then(done, function () { select(btn); });
      } else {
        select(btn);
      }
    });
  });
  function select(btn) {
    var r = document.createRange();
    r.selectNodeContents(btn.parentElement.querySelector("pre"));
    var s = window.getSelection();
    s.removeAllRanges();
    s.addRange(r);
  }

  // Printing shows every finding, opened.
  window.addEventListener("beforeprint", function () {
    document.querySelectorAll("details.finding, details.host, details.links").forEach(function (d) { d.open = true; });
  });
})();
