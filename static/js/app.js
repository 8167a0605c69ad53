// Small progressive enhancements; pages work without them.
document.addEventListener("htmx:responseError", (event) => {
  const target = event.detail.target;
  if (target && event.detail.xhr.responseText) {
    target.innerHTML = event.detail.xhr.responseText;
  }
});

// A select whose options are URLs opens the chosen one (no inline handler: the CSP forbids them).
document.addEventListener("change", (event) => {
  const form = event.target.closest("form[data-navigate-on-change]");
  if (form && event.target.name === form.dataset.navigateOnChange) {
    window.location.href = event.target.value;
  }
});
