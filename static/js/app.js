// Small progressive enhancements; pages work without them.
document.addEventListener("htmx:responseError", (event) => {
  const target = event.detail.target;
  if (target && event.detail.xhr.responseText) {
    target.innerHTML = event.detail.xhr.responseText;
  }
});
// A refused action (400 bad input, 403 not allowed, 409 someone acted first) answers with the panel
// that says why: swap it in like a success, so its forms keep working through htmx.
document.addEventListener("htmx:beforeSwap", (event) => {
  const status = event.detail.xhr.status;
  if (status >= 400 && status < 500) {
    event.detail.shouldSwap = true;
    event.detail.isError = false;
  }
});

// A select whose options are URLs opens the chosen one (no inline handler: the CSP forbids them).
document.addEventListener("change", (event) => {
  const form = event.target.closest("form[data-navigate-on-change]");
  if (form && event.target.name === form.dataset.navigateOnChange) {
    window.location.href = event.target.value;
  }
});

// A button with data-copy="<selector>" copies that element's text (the new API token), and says so.
// Where the clipboard is refused, the text is selected instead, ready for Ctrl-C.
document.addEventListener("click", (event) => {
  const button = event.target.closest("button[data-copy]");
  if (!button) return;
  const source = document.querySelector(button.dataset.copy);
  if (!source) return;
  const done = (label) => {
    button.textContent = label;
    setTimeout(() => { button.textContent = "Copy"; }, 2000);
  };
  const selectIt = () => {
    const range = document.createRange();
    range.selectNodeContents(source);
    window.getSelection().removeAllRanges();
    window.getSelection().addRange(range);
    done("Selected: press Ctrl-C");
  };
  if (navigator.clipboard && navigator.clipboard.writeText) {
    navigator.clipboard.writeText(source.textContent.trim()).then(() => done("Copied"), selectIt);
  } else {
    selectIt();
  }
});

// The header's menus (the nav at phone width, the account menu) are <details>: Escape closes the open
// one and gives focus back to its summary; a click elsewhere closes it too.
document.addEventListener("keydown", (event) => {
  if (event.key !== "Escape") return;
  const open = document.activeElement && document.activeElement.closest(".topbar details[open]");
  if (open) {
    open.open = false;
    open.querySelector("summary").focus();
  }
});
document.addEventListener("click", (event) => {
  document.querySelectorAll(".topbar details[open]").forEach((menu) => {
    if (!menu.contains(event.target)) menu.open = false;
  });
});

// A table or chart box that scrolls sideways (a wide table on a phone) must be reachable by keyboard,
// or its hidden columns cannot be scrolled into view without a mouse: such a box takes focus.
const scrollBoxes = ".table-wrap, .timeline-scroll";
const keyboardScrollable = () => {
  document.querySelectorAll(scrollBoxes).forEach((box) => {
    if (box.hasAttribute("tabindex") && !("scrollFocus" in box.dataset)) return;  // the template's own
    if (box.scrollWidth > box.clientWidth + 1) {
      box.tabIndex = 0;
      box.dataset.scrollFocus = "";
    } else {
      box.removeAttribute("tabindex");
      delete box.dataset.scrollFocus;
    }
  });
};
document.addEventListener("DOMContentLoaded", keyboardScrollable);
document.addEventListener("htmx:afterSettle", keyboardScrollable);
window.addEventListener("resize", keyboardScrollable);
