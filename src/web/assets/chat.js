// The participant's web chat: live messages over server-sent events, sending as JSON, poll buttons.
(() => {
  const list = document.getElementById('chat');
  const form = document.getElementById('chat-form');
  const input = document.getElementById('chat-input');
  const seen = new Set([...list.querySelectorAll('[data-entry-id]')].map((node) => node.dataset.entryId));
  const scroll = () => window.scrollTo(0, document.body.scrollHeight);
  // Times come in the participant's zone when the study knows it; otherwise in UTC, shown here in the browser's zone
  // (where the participant is), in the server's format: "Tue 3 Mar, 08:50".
  const browserTime = new Intl.DateTimeFormat('en-GB', {
    weekday: 'short',
    day: 'numeric',
    month: 'short',
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
  });
  const localiseTimes = (root) => {
    if (list.dataset.timeZone) return;
    for (const time of root.querySelectorAll('time[datetime]')) {
      time.textContent = browserTime.format(new Date(time.getAttribute('datetime')));
    }
  };
  localiseTimes(list);

  const source = new EventSource(list.dataset.live);
  source.addEventListener('message', (event) => {
    const holder = document.createElement('template');
    holder.innerHTML = event.data;
    const item = holder.content.firstElementChild;
    if (!item || seen.has(item.dataset.entryId)) return;
    seen.add(item.dataset.entryId);
    localiseTimes(item);
    list.append(item);
    scroll();
  });
  // The server ends the stream when the link is revoked; the reconnection then fails (404) and the browser gives up
  // (a server that is down or restarting is retried instead, until it answers).
  source.addEventListener('error', () => {
    if (source.readyState !== EventSource.CLOSED) return;
    const notice = document.getElementById('chat-closed');
    notice.hidden = false;
    for (const control of form.elements) control.disabled = true;
  });

  async function send(body) {
    const response = await fetch(list.dataset.send, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (!response.ok) alert('Your message could not be sent. Please try again.');
    return response.ok;
  }

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const text = input.value.trim();
    if (!text) return;
    input.disabled = true;
    if (await send({ text })) input.value = '';
    input.disabled = false;
    input.focus();
  });
  input.addEventListener('keydown', (event) => {
    if (event.key === 'Enter' && !event.shiftKey) {
      event.preventDefault();
      form.requestSubmit();
    }
  });
  list.addEventListener('click', async (event) => {
    const button = event.target.closest('button.poll-option');
    if (!button) return;
    const group = button.parentElement;
    for (const other of group.querySelectorAll('button')) other.disabled = true;
    button.setAttribute('aria-pressed', 'true');
    await send({ poll_id: button.dataset.pollId, option: button.dataset.option });
  });
  scroll();
})();
