// Switchboard operator console. Plain browser JavaScript (an ES module, no build step). It calls only the
// public API with the TokenAccount typed in, and listens on /console/stream for the events of every
// instance of the account. Everything shown is set with textContent: nothing from the server is parsed as
// HTML.

import { createEventLog } from './console-events.js';
import { $, el, formatTime, numberOf, setBadge, stateOf } from './console-view.js';

const SETTINGS = [
  'autoRejectCalls',
  'callRejectMessage',
  'ignoreGroupMessages',
  'keepOnlineStatus',
  'autoReadMessages',
  'disableHistorySync',
  'ignoreStatus',
];
const POLL_MS = 15_000;
const QR_REFRESH_MS = 20_000;
const QR_REFRESHES = 6;

/**
 * Everything the page knows. The token lives only here: never in cookies, storage or the page address
 * (the stream's URL carries it as the spec's browser WebSocket form, in memory only).
 */
const session = {
  token: '',
  account: '',
  /** name → instance as GET /api/instance/list returns it */
  instances: new Map(),
  selected: '',
  stream: null,
  retries: 0,
  reconnectTimer: 0,
  pollTimer: 0,
  reloadTimer: 0,
  qrTimer: 0,
  qrLeft: 0,
  settingsDirty: false,
  /** Bumped at sign-in and sign-out: answers of an older session are dropped. */
  epoch: 0,
};

// ---------- messages and API calls ----------

const flash = { timer: 0 };
function say(text) {
  $('error').textContent = '';
  $('status').textContent = text;
  clearTimeout(flash.timer);
  flash.timer = setTimeout(() => {
    $('status').textContent = '';
  }, 4000);
}
function fail(text) {
  $('status').textContent = '';
  $('error').textContent = text;
}
function clearMessages() {
  $('status').textContent = '';
  $('error').textContent = '';
}

class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

async function api(method, path, body) {
  const headers = { token: session.token };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    credentials: 'omit',
    cache: 'no-store',
  });
  let json = {};
  try {
    json = await res.json();
  } catch {
    /* a non-JSON answer is reported by its status below */
  }
  if (!res.ok || json.success === false) {
    throw new ApiError(res.status, (json.error && json.error.message) || 'HTTP ' + res.status);
  }
  return json;
}

/** Runs a user action: its error is shown, never thrown. */
async function run(action) {
  try {
    await action();
  } catch (err) {
    if (err instanceof ApiError && err.status === 401 && session.token) {
      signOut('Your token is no longer valid: sign in again.');
      return;
    }
    fail(err instanceof Error ? err.message : String(err));
  }
}

const pathOf = (name) => encodeURIComponent(name);

/** Recent events, filtered to the selected instance when the box is ticked. */
const events = createEventLog((ev) => !$('events-selected-only').checked || ev.instance === session.selected);

// ---------- sign in and out ----------

$('signin-form').addEventListener('submit', (e) => {
  e.preventDefault();
  const token = $('token').value.trim();
  if (!token) return;
  void signIn(token);
});

async function signIn(token) {
  clearMessages();
  session.token = token;
  const epoch = ++session.epoch;
  try {
    // The account webhook read is the public API's account-only read: an instance token gets 403 here.
    await api('GET', '/api/account/webhook');
    await loadInstances();
  } catch (err) {
    if (epoch !== session.epoch) return;
    session.token = '';
    fail(err instanceof Error ? err.message : String(err));
    $('token').focus();
    return;
  }
  if (epoch !== session.epoch) return;
  $('token').value = '';
  $('signin').hidden = true;
  $('workspace').hidden = false;
  $('session').hidden = false;
  openStream();
  say('Signed in.');
}

$('signout').addEventListener('click', () => signOut('Signed out.', false));

/** Forgets the token and everything shown; `asError` shows the message as an error. */
function signOut(message, asError = true) {
  session.epoch++;
  session.token = '';
  session.account = '';
  closeStream();
  clearTimeout(session.reconnectTimer);
  clearInterval(session.pollTimer);
  clearTimeout(session.reloadTimer);
  session.pollTimer = 0;
  stopQr();
  session.instances.clear();
  session.selected = '';
  events.clear();
  session.retries = 0;
  session.settingsDirty = false;
  $('account-name').textContent = '';
  $('token-once-value').value = '';
  $('token-once').hidden = true;
  $('pairing-code').textContent = '';
  $('pairing').hidden = true;
  renderList();
  renderDetail();
  $('workspace').hidden = true;
  $('session').hidden = true;
  $('signin').hidden = false;
  if (asError) fail(message);
  else say(message);
  $('token').focus();
}

// ---------- live stream ----------

function setLive(state, text) {
  $('live').dataset.state = state;
  $('live').textContent = text;
}

function openStream() {
  const url = new URL('/console/stream', location.href);
  url.protocol = location.protocol === 'https:' ? 'wss:' : 'ws:';
  url.searchParams.set('token', session.token);
  const ws = new WebSocket(url);
  session.stream = ws;
  setLive('connecting', session.retries ? 'Reconnecting…' : 'Connecting…');
  ws.addEventListener('open', () => {
    if (session.stream !== ws) return;
    session.retries = 0;
    setLive('live', 'Live');
    clearInterval(session.pollTimer);
    session.pollTimer = 0;
  });
  ws.addEventListener('message', (e) => {
    if (session.stream !== ws || typeof e.data !== 'string') return;
    let frame;
    try {
      frame = JSON.parse(e.data);
    } catch {
      return;
    }
    onFrame(frame);
  });
  ws.addEventListener('close', (e) => {
    if (session.stream !== ws) return;
    session.stream = null;
    if (e.code === 1008) {
      signOut('Your token is no longer valid: sign in again.');
      return;
    }
    // Until the stream is back, the list is polled so that states do not go stale.
    if (!session.pollTimer) session.pollTimer = setInterval(() => void run(loadInstances), POLL_MS);
    const delay = Math.min(30_000, 1000 * 2 ** session.retries) * (0.75 + Math.random() / 2);
    session.retries++;
    setLive('reconnecting', 'Reconnecting in ' + Math.round(delay / 1000) + ' s (polling)');
    session.reconnectTimer = setTimeout(() => {
      if (session.token) openStream();
    }, delay);
  });
}

function closeStream() {
  const ws = session.stream;
  session.stream = null;
  if (ws) ws.close(1000);
  setLive('offline', 'Offline');
}

/** Asks the stream to re-list the account's instances now (after a creation or a deletion). */
function refreshStream() {
  const ws = session.stream;
  if (ws && ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify({ console: 'refresh' }));
}

function onFrame(frame) {
  if (frame && frame.console === 'instances') {
    session.account = String(frame.account || '');
    $('account-name').textContent = session.account;
    // Sent once the subscriptions are live: a fresh list now misses no later change.
    void run(loadInstances);
    return;
  }
  if (!frame || typeof frame.event !== 'string' || !frame.instanceData) return;
  const name = String(frame.instanceData.instance || '');
  events.add({ at: Date.now(), instance: name, event: frame.event, data: frame.data });
  // `connectionState` is the state as the instance list names it (`state` is the hosted product's word;
  // a node of an older build sent only `state`, in our words).
  if (frame.event === 'instance.state' && frame.data) {
    onState(name, String(frame.data.connectionState || frame.data.state || ''));
  }
}

function onState(name, state) {
  const instance = session.instances.get(name);
  if (!instance || !state) return;
  instance.connection = { ...instance.connection, state };
  renderListItem(name);
  if (name === session.selected) renderDetail();
  // The number and profile name arrive with the list, not with the state event.
  if (state === 'connected' || state === 'loggedout') scheduleReload();
}

function scheduleReload() {
  clearTimeout(session.reloadTimer);
  session.reloadTimer = setTimeout(() => void run(loadInstances), 300);
}

// ---------- instances ----------

async function loadInstances() {
  const epoch = session.epoch;
  const res = await api('GET', '/api/instance/list');
  if (epoch !== session.epoch) return;
  session.instances = new Map((res.instances || []).map((i) => [String(i.name), i]));
  if (session.selected && !session.instances.has(session.selected)) session.selected = '';
  renderList();
  renderDetail();
}

function matchesFilter(instance, filter) {
  if (!filter) return true;
  const hay = [
    instance.name,
    numberOf(instance.connection && instance.connection.numberJid),
    stateOf(instance),
    instance.profile && instance.profile.name,
  ]
    .filter(Boolean)
    .join(' ')
    .toLowerCase();
  return hay.includes(filter);
}

function renderList() {
  const list = $('instance-list');
  const filter = $('filter').value.trim().toLowerCase();
  const names = [...session.instances.keys()].sort((a, b) => a.localeCompare(b));
  const shown = names.filter((n) => matchesFilter(session.instances.get(n), filter));
  list.replaceChildren(...shown.map((n) => listItem(session.instances.get(n))));
  const connected = names.filter((n) => stateOf(session.instances.get(n)) === 'connected').length;
  $('instance-count').textContent = names.length ? connected + ' of ' + names.length + ' connected' : '';
  $('no-instances').hidden = names.length > 0;
}

function listItem(instance) {
  const li = el('li');
  li.dataset.name = instance.name;
  const button = el('button', 'instance-item');
  button.type = 'button';
  button.dataset.name = instance.name;
  if (instance.name === session.selected) button.setAttribute('aria-current', 'true');
  const badge = el('span', 'badge');
  setBadge(badge, stateOf(instance));
  const number = numberOf(instance.connection && instance.connection.numberJid);
  const profile = instance.profile && instance.profile.name;
  button.append(
    el('span', 'name', instance.name),
    badge,
    el('span', 'sub', [number, profile].filter(Boolean).join(' · ') || 'no number linked'),
  );
  li.append(button);
  return li;
}

function renderListItem(name) {
  const old = [...$('instance-list').children].find((li) => li.dataset.name === name);
  const instance = session.instances.get(name);
  if (old && instance) old.replaceWith(listItem(instance));
  const names = [...session.instances.values()];
  const connected = names.filter((i) => stateOf(i) === 'connected').length;
  $('instance-count').textContent = names.length ? connected + ' of ' + names.length + ' connected' : '';
}

$('instance-list').addEventListener('click', (e) => {
  const button = e.target instanceof Element ? e.target.closest('button[data-name]') : null;
  if (button) select(button.dataset.name);
});

$('filter').addEventListener('input', () => renderList());

function select(name) {
  if (name !== session.selected) {
    stopQr();
    $('pairing').hidden = true;
    $('pairing-code').textContent = '';
    $('pairing-number').value = '';
    $('token-once').hidden = true;
    $('token-once-value').value = '';
    session.settingsDirty = false;
    $('settings-note').textContent = '';
  }
  session.selected = name;
  renderList();
  renderDetail();
  if ($('events-selected-only').checked) events.render();
}

function renderDetail() {
  const instance = session.instances.get(session.selected);
  $('no-selection').hidden = !!instance;
  $('detail').hidden = !instance;
  if (!instance) {
    stopQr();
    return;
  }
  const state = stateOf(instance);
  $('detail-name').textContent = instance.name;
  setBadge($('detail-state'), state);
  $('detail-number').textContent = numberOf(instance.connection && instance.connection.numberJid) || '—';
  $('detail-profile').textContent = (instance.profile && instance.profile.name) || '—';
  $('detail-created').textContent = instance.createdAt ? new Date(instance.createdAt).toLocaleString() : '—';
  // Why WhatsApp could not be reached last time (DNS, refused, proxy down); gone once connected.
  const lastError = (instance.connection && instance.connection.lastError) || '';
  $('detail-error-row').hidden = !lastError;
  $('detail-error').textContent = lastError;
  const connected = state === 'connected';
  $('connected-note').hidden = !connected;
  $('connected-note').textContent = connected
    ? 'Connected' + (instance.connection.numberJid ? ' as ' + numberOf(instance.connection.numberJid) : '') + '.'
    : '';
  if (connected) {
    stopQr();
    $('pairing').hidden = true;
  }
  $('connect-qr').disabled = connected;
  $('pairing-form').querySelector('button').disabled = connected;
  $('logout').disabled = state === 'loggedout' || state === 'disconnected';
  if (!session.settingsDirty) fillSettings(instance.settings || {});
}

$('create-form').addEventListener('submit', (e) => {
  e.preventDefault();
  const name = $('new-name').value.trim();
  if (!name) return;
  void run(async () => {
    const res = await api('POST', '/api/instance/new', { name });
    $('new-name').value = '';
    refreshStream();
    await loadInstances();
    select(name);
    $('token-once-value').value = (res.instance && res.instance.token) || '';
    $('token-once').hidden = !$('token-once-value').value;
    say('Instance "' + name + '" created. Connect it with a QR code or a pairing code.');
  });
});

$('token-once-done').addEventListener('click', () => {
  $('token-once-value').value = '';
  $('token-once').hidden = true;
});

// ---------- connection ----------

const DATA_PNG = /^data:image\/png;base64,[A-Za-z0-9+/]+={0,2}$/;

async function fetchQr(name) {
  let res;
  try {
    res = await api('GET', '/api/instance/connect/' + pathOf(name));
  } catch (err) {
    // A failed connect (WhatsApp out of reach) records its cause on the instance: show it.
    scheduleReload();
    throw err;
  }
  if (name !== session.selected) return;
  if (res.status === 'connected') {
    stopQr();
    say('"' + name + '" is already connected.');
    scheduleReload();
    return;
  }
  if (res.status !== 'qr' || typeof res.qrCodeBase64 !== 'string' || !DATA_PNG.test(res.qrCodeBase64)) {
    throw new Error('The server did not return a QR code image.');
  }
  $('qr-image').src = res.qrCodeBase64;
  $('qr').hidden = false;
  $('pairing').hidden = true;
}

function stopQr() {
  clearInterval(session.qrTimer);
  session.qrTimer = 0;
  $('qr').hidden = true;
  $('qr-image').removeAttribute('src');
}

$('connect-qr').addEventListener('click', () => {
  const name = session.selected;
  if (!name) return;
  void run(async () => {
    stopQr();
    await fetchQr(name);
    if ($('qr').hidden) return;
    // WhatsApp replaces its QR code every 20 s or so: fetch the current one while this one waits.
    session.qrLeft = QR_REFRESHES;
    session.qrTimer = setInterval(() => {
      const instance = session.instances.get(name);
      if (name !== session.selected || stateOf(instance) === 'connected' || session.qrLeft-- <= 0) {
        if (name === session.selected && stateOf(instance) !== 'connected') {
          say('The QR code expired: click Show QR code for a new one.');
        }
        stopQr();
        return;
      }
      void run(() => fetchQr(name));
    }, QR_REFRESH_MS);
  });
});

$('pairing-form').addEventListener('submit', (e) => {
  e.preventDefault();
  const name = session.selected;
  const number = $('pairing-number').value.replace(/[\s()+-]/g, '');
  if (!name) return;
  if (!/^\d{8,15}$/.test(number)) {
    fail('Enter the phone number with its country code: 8 to 15 digits.');
    return;
  }
  void run(async () => {
    stopQr();
    const res = await api('GET', '/api/instance/connect/' + pathOf(name) + '?number=' + encodeURIComponent(number));
    if (name !== session.selected) return;
    if (res.status === 'connected') {
      say('"' + name + '" is already connected.');
      return;
    }
    $('pairing-code').textContent = String(res.pairingCode || '');
    $('pairing').hidden = false;
  });
});

$('logout').addEventListener('click', () => {
  const name = session.selected;
  if (!name) return;
  void run(async () => {
    await api('POST', '/api/instance/logout/' + pathOf(name));
    say('"' + name + '" logged out.');
    await loadInstances();
  });
});

$('reconnect').addEventListener('click', () => {
  const name = session.selected;
  if (!name) return;
  void run(async () => {
    await api('POST', '/api/instance/reconnect/' + pathOf(name));
    say('Reconnecting "' + name + '".');
  });
});

$('delete').addEventListener('click', () => {
  const name = session.selected;
  if (!name) return;
  // A destructive action gets the browser's own confirmation.
  if (!confirm('Delete instance "' + name + '"? The device is unlinked and its configuration is lost.')) return;
  void run(async () => {
    await api('DELETE', '/api/instance/delete/' + pathOf(name));
    session.selected = '';
    refreshStream();
    await loadInstances();
    say('Instance "' + name + '" deleted.');
  });
});

// ---------- settings ----------

function fillSettings(settings) {
  for (const key of SETTINGS) {
    const input = $('set-' + key);
    if (input.type === 'checkbox') input.checked = !!settings[key];
    else input.value = settings[key] == null ? '' : String(settings[key]);
  }
}

$('settings-form').addEventListener('input', () => {
  session.settingsDirty = true;
  $('settings-note').textContent = 'Unsaved changes';
});

$('settings-form').addEventListener('submit', (e) => {
  e.preventDefault();
  const name = session.selected;
  const instance = session.instances.get(name);
  if (!instance) return;
  // Only what changed is sent, so that two operators editing different settings do not undo each other.
  const current = instance.settings || {};
  const patch = {};
  for (const key of SETTINGS) {
    const input = $('set-' + key);
    const value = input.type === 'checkbox' ? input.checked : input.value;
    if (value !== current[key]) patch[key] = value;
  }
  if (Object.keys(patch).length === 0) {
    session.settingsDirty = false;
    $('settings-note').textContent = 'Nothing to save';
    return;
  }
  void run(async () => {
    const res = await api('POST', '/api/instance/settings/' + pathOf(name), patch);
    const fresh = session.instances.get(name);
    if (fresh) fresh.settings = res.settings;
    if (name !== session.selected) return;
    session.settingsDirty = false;
    fillSettings(res.settings || {});
    $('settings-note').textContent = 'Saved at ' + formatTime(Date.now());
    say('Settings of "' + name + '" saved.');
  });
});

// ---------- events ----------

$('events-selected-only').addEventListener('change', () => events.render());
$('events-clear').addEventListener('click', () => events.clear());
