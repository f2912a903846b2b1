// Dashboard: live transcript over server-sent events; CSV file → textarea; Back links. Delete confirms on its own page.
(() => {
  const transcript = document.getElementById('transcript');
  if (transcript) {
    const seen = new Set([...transcript.querySelectorAll('[data-entry-id]')].map((node) => node.dataset.entryId));
    const source = new EventSource(transcript.dataset.live);
    source.addEventListener('message', (event) => {
      const holder = document.createElement('template');
      holder.innerHTML = event.data;
      const item = holder.content.firstElementChild;
      if (!item || seen.has(item.dataset.entryId)) return;
      seen.add(item.dataset.entryId);
      transcript.append(item);
    });
  }
  // The open alerts' count in every page's header, live (alert-inbox-routes.ts).
  const alertCount = document.getElementById('alert-count');
  if (alertCount) {
    const counts = new EventSource(alertCount.dataset.live);
    counts.addEventListener('message', (event) => {
      alertCount.textContent = event.data;
      alertCount.classList.toggle('unread', event.data !== '0');
    });
  }
  // "Back" on an error page: to the page before when there is one (no inline script: the pages' CSP forbids it).
  for (const link of document.querySelectorAll('a[data-back]')) {
    link.addEventListener('click', (event) => {
      if (history.length < 2) return;
      event.preventDefault();
      history.back();
    });
  }
  for (const picker of document.querySelectorAll('input[type=file][data-fills]')) {
    picker.addEventListener('change', async () => {
      const file = picker.files?.[0];
      if (file) document.getElementById(picker.dataset.fills).value = await file.text();
    });
  }
})();
