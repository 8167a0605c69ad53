// Keyboard shortcuts: `/` search, `g` then a letter to go to a list, `?` to list them all.
// The targets come from the header's search form (templates/base.html, data-go-<letter>), so the URLs
// stay Django's. A file of its own, no inline script: the Content-Security-Policy allows only these.
(() => {
  const GO = [
    ["w", "My work"],
    ["p", "Programs"],
    ["f", "Freeze list"],
    ["m", "Metrics"],
    ["i", "Incidents"],
    ["n", "Notifications"],
  ];
  // After `g`, the second key must follow within this many milliseconds.
  const CHORD_MS = 1500;
  let chordUntil = 0;

  const searchForm = () => document.querySelector("form.site-search");
  // Signed out (the sign-in page) there is no search box and nowhere to go: no shortcuts.
  if (!searchForm()) return;

  // Where `/` lands: the search page's own box when there is one, else the header's.
  const searchBox = () =>
    document.getElementById("search-q") || document.getElementById("site-search-q");

  const typingIn = (target) =>
    target instanceof Element &&
    (target.closest("input, textarea, select, [contenteditable]:not([contenteditable=false])") !== null);

  const key = (text) => {
    const kbd = document.createElement("kbd");
    kbd.textContent = text;
    return kbd;
  };

  // Built on first use from the same list the keys follow, so the overlay never disagrees with them.
  const overlay = () => {
    let dialog = document.getElementById("shortcuts-dialog");
    if (dialog) return dialog;
    dialog = document.createElement("dialog");
    dialog.id = "shortcuts-dialog";
    dialog.className = "shortcuts-dialog";
    dialog.setAttribute("aria-labelledby", "shortcuts-title");
    const title = document.createElement("h2");
    title.id = "shortcuts-title";
    title.textContent = "Keyboard shortcuts";
    const list = document.createElement("dl");
    const row = (keys, what) => {
      const dt = document.createElement("dt");
      keys.forEach((k, i) => {
        if (i) dt.append(" then ");
        dt.append(key(k));
      });
      const dd = document.createElement("dd");
      dd.textContent = what;
      list.append(dt, dd);
    };
    row(["/"], "Search");
    const form = searchForm();
    GO.forEach(([letter, label]) => {
      if (form && form.dataset[`go${letter.toUpperCase()}`]) row(["g", letter], `Go to ${label}`);
    });
    row(["?"], "Show this list");
    row(["Esc"], "Close it");
    const note = document.createElement("p");
    note.className = "muted small";
    note.textContent = "Shortcuts wait while you type in a field.";
    const close = document.createElement("form");
    close.method = "dialog";
    const button = document.createElement("button");
    button.textContent = "Close";
    close.append(button);
    dialog.append(title, list, note, close);
    document.body.append(dialog);
    return dialog;
  };

  document.addEventListener("keydown", (event) => {
    // Escape in a search box leaves it (at phone width the header's folds back), so the keys work again.
    if (event.key === "Escape" && event.target instanceof HTMLInputElement && event.target.type === "search") {
      event.target.blur();
      return;
    }
    if (event.defaultPrevented || event.ctrlKey || event.metaKey || event.altKey) return;
    if (typingIn(event.target) || document.querySelector("dialog[open]")) return;
    const now = Date.now();
    if (now < chordUntil) {
      chordUntil = 0;
      const form = searchForm();
      const url = form && form.dataset[`go${event.key.toUpperCase()}`];
      if (url && event.key.length === 1 && event.key === event.key.toLowerCase()) {
        event.preventDefault();
        window.location.href = url;
        return;
      }
    }
    if (event.key === "g") {
      chordUntil = now + CHORD_MS;
    } else if (event.key === "/") {
      const box = searchBox();
      if (box) {
        event.preventDefault();
        box.focus();
        box.select();
      }
    } else if (event.key === "?") {
      event.preventDefault();
      overlay().showModal();
    }
  });
})();
