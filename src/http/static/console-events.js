// The operator console's event log: the last MAX_EVENTS events received on the stream, newest first.

import { $, STATE_LABELS, el, formatTime, numberOf } from './console-view.js';

const MAX_EVENTS = 300;

/** One line saying what an event is about. */
export function summarize(ev) {
  const d = ev.data && typeof ev.data === 'object' ? ev.data : {};
  switch (ev.event) {
    case 'instance.state':
      return 'State: ' + (STATE_LABELS[d.connectionState || d.state] || String(d.state || '?'));
    case 'message.exchange': {
      const m = d.message && typeof d.message === 'object' ? d.message : {};
      // `content` is `{text}`; a node of an older build sent the text itself.
      const text =
        typeof m.content === 'string'
          ? m.content
          : m.content && typeof m.content.text === 'string'
            ? m.content.text
            : '';
      const content = text || '[' + String(m.type || 'message') + ']';
      if (d.direction === 'outgoing') return '→ ' + numberOf(d.recipient) + ': ' + content;
      const sender = d.sender && typeof d.sender === 'object' ? d.sender : {};
      return '← ' + [sender.name, numberOf(sender.jid)].filter(Boolean).join(' ') + ': ' + content;
    }
    case 'message.status': {
      const ids = Array.isArray(d.messageIds) ? d.messageIds.length : 0;
      return (
        String(d.status || '?') + ': ' + ids + (ids === 1 ? ' message to ' : ' messages to ') + numberOf(d.recipient)
      );
    }
    case 'call.update':
      return 'Call ' + String(d.status || '?') + ' from ' + numberOf(d.from) + (d.isVideo ? ' (video)' : '');
    case 'group.flow':
      return 'Group ' + String(d.groupName || d.groupJid || '?') + ': ' + String(d.type || '?');
    case 'label.update': {
      const labels = Array.isArray(d.labels) ? d.labels.map((l) => String(l && l.name)).join(', ') : '';
      return 'Labels ' + String(d.action || '?') + ' on ' + numberOf(d.chat) + (labels ? ': ' + labels : '');
    }
    default:
      return ev.event;
  }
}

function eventItem(ev) {
  const li = el('li', 'event');
  const details = el('details');
  const summary = el('summary');
  const type = el('span', 'type', ev.event);
  type.dataset.event = ev.event;
  const text = summarize(ev);
  summary.append(
    el('span', 'time', formatTime(ev.at)),
    el('span', 'instance', ev.instance),
    type,
    el('span', 'text', text.length > 280 ? text.slice(0, 279) + '…' : text),
  );
  details.append(summary, el('pre', '', JSON.stringify(ev.data, null, 2)));
  li.append(details);
  return li;
}

/**
 * `shown(ev)` decides which events are listed (the "selected instance only" filter); the log keeps every
 * event so that changing the filter shows them again.
 */
export function createEventLog(shown) {
  let events = [];

  function render() {
    const visible = events.filter(shown);
    $('event-list').replaceChildren(...visible.reverse().map(eventItem));
    $('no-events').hidden = visible.length > 0;
  }

  return {
    add(ev) {
      events.push(ev);
      if (events.length > MAX_EVENTS) events.splice(0, events.length - MAX_EVENTS);
      if (!shown(ev)) return;
      const list = $('event-list');
      list.prepend(eventItem(ev));
      while (list.children.length > MAX_EVENTS) list.lastElementChild.remove();
      $('no-events').hidden = true;
    },
    render,
    clear() {
      events = [];
      render();
    },
  };
}
