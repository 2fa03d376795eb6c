import type { Group } from '../server/group-book.js';
import type { Phone } from '../phone/phone.js';
import type { Simulator } from '../simulator.js';

export function phoneView(phone: Phone): Record<string, unknown> {
  const a = phone.account;
  return {
    number: a.number,
    jid: a.pnJid,
    lid: a.lidJid,
    name: a.pushName,
    business: a.business ?? null,
    devices: a.linkedDevices().map((d) => d.pnJid),
    autoRead: phone.autoRead,
  };
}

export function groupView(g: Group): Record<string, unknown> {
  return {
    jid: g.jid,
    subject: g.subject,
    creator: g.creator.pnJid,
    description: g.description?.text ?? null,
    announce: g.announce,
    locked: g.locked,
    joinApproval: g.joinApproval,
    inviteCode: g.inviteCode,
    participants: [...g.members].map(([a, role]) => ({ jid: a.pnJid, lid: a.lidJid, role })),
    requests: [...g.requests.keys()].map((a) => a.pnJid),
  };
}

/**
 * Every device with its current connection, and the history of its logins, replacements and
 * disconnects taken from the stanza log.
 */
export function deviceViews(sim: Simulator): Record<string, unknown>[] {
  const history = new Map<string, Record<string, unknown>[]>();
  for (const e of sim.core.log.after(0, Number.MAX_SAFE_INTEGER)) {
    if (!e.device || !['login', 'login-refused', 'replaced', 'disconnect', 'registered', 'unlinked'].includes(e.kind)) {
      continue;
    }
    const list = history.get(e.device) ?? [];
    list.push({
      kind: e.kind,
      t: e.t,
      connection: e.connection,
      ...(e.node ? { node: e.node } : {}),
      ...(e.reason !== undefined ? { reason: e.reason } : {}),
      ...(e.why ? { why: e.why } : {}),
    });
    history.set(e.device, list);
  }
  const out: Record<string, unknown>[] = [];
  for (const account of sim.core.directory.accounts()) {
    for (const d of account.devices.values()) {
      const endpoint = d.endpoint;
      out.push({
        jid: d.pnJid,
        lid: d.lidJid,
        account: account.number,
        phone: d.id === 0,
        linked: d.linked,
        platform: d.platform,
        pending: sim.core.queues.pendingCount(d),
        connection: endpoint
          ? {
              id: endpoint.id,
              ...(endpoint.node ? { node: endpoint.node } : {}),
              ...('connectedAt' in endpoint ? { since: (endpoint as { connectedAt: number }).connectedAt } : {}),
            }
          : null,
        history: history.get(d.pnJid) ?? [],
      });
    }
  }
  return out;
}
