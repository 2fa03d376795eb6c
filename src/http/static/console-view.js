// Small DOM and formatting helpers of the operator console (console.js). Text is only ever set with
// textContent: nothing from the server is parsed as HTML.

export const $ = (id) => document.getElementById(id);

export const STATE_LABELS = {
  connected: 'Connected',
  connecting: 'Connecting',
  qr: 'Waiting for link',
  disconnected: 'Disconnected',
  loggedout: 'Logged out',
};

/** A new element with a class and a text. */
export function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = String(text);
  return node;
}

/** `+5511…` for a user JID, the JID itself otherwise. */
export function numberOf(jid) {
  if (typeof jid !== 'string' || !jid) return '';
  const user = jid.split('@')[0].split(':')[0];
  return /^\d+$/.test(user) ? '+' + user : jid;
}

export function stateOf(instance) {
  return (instance && instance.connection && instance.connection.state) || 'disconnected';
}

export function setBadge(node, state) {
  node.dataset.state = state;
  node.textContent = STATE_LABELS[state] || state;
}

export function formatTime(ms) {
  return new Date(ms).toLocaleTimeString(undefined, { hour12: false });
}
