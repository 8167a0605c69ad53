// After a refused submit the form's error summary (templates/_form_errors.html) takes the focus and
// the view, on a full page load and after an htmx swap: the person reads what to fix first, wherever
// the form sits on the page. Pages work without it: the summary is plain HTML at the form's top.
(() => {
  const SUMMARY = "[data-error-summary]";

  const focusSummary = (root) => {
    const scope = root && root.isConnected ? root : document;
    const summary = scope.matches && scope.matches(SUMMARY) ? scope : scope.querySelector(SUMMARY);
    if (!summary) return;
    summary.scrollIntoView({ block: "start" });
    summary.focus({ preventScroll: true });
  };

  document.addEventListener("DOMContentLoaded", () => focusSummary(document));
  // What loads after the DOM (charts, fonts) can push the summary down: bring it back into view once
  // the page has settled, unless the person has moved on meanwhile.
  window.addEventListener("load", () => {
    const summary = document.querySelector(SUMMARY);
    if (summary && document.activeElement === summary) summary.scrollIntoView({ block: "start" });
  });
  document.addEventListener("htmx:afterSettle", (event) => focusSummary(event.detail.elt));

  // A link in the summary puts the focus in its field, not only the view on it.
  document.addEventListener("click", (event) => {
    const link = event.target.closest(`${SUMMARY} a[href^="#"]`);
    if (!link) return;
    const field = document.getElementById(link.getAttribute("href").slice(1));
    if (!field) return;
    event.preventDefault();
    field.scrollIntoView({ block: "center" });
    field.focus({ preventScroll: true });
  });
})();
