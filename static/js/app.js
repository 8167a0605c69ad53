// Small progressive enhancements; pages work without them.
document.addEventListener("htmx:responseError", (event) => {
  const target = event.detail.target;
  if (target && event.detail.xhr.responseText) {
    target.innerHTML = event.detail.xhr.responseText;
  }
});
