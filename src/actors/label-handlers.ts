import type { ActorScope } from './actor-scope.js';
import type { CallHandlers } from './instance-actor.js';
import type { LabelCallMap } from './label-calls.js';
import { bareReason, networkOperation } from './network-operation.js';

/** The label calls on the owner node, through the session's `labels`. */
export function labelHandlers(): Pick<CallHandlers<ActorScope>, keyof LabelCallMap> {
  return {
    'labels.chats': async (scope, { refresh }) =>
      networkOperation('failed to read chat labels', () => scope.session().labels.chats(refresh)),
    'labels.list': async (scope) => {
      const { labels } = scope.session();
      const onChats = await networkOperation('failed to read labels', () => labels.chats(false));
      const all = new Map((await networkOperation('failed to read labels', () => labels.list())).map((l) => [l.id, l]));
      // A label can be on a chat before its name arrived (labels.edit): still list it.
      for (const chat of onChats) for (const l of chat.labels) if (!all.has(l.id)) all.set(l.id, l);
      return [...all.values()];
    },
    'labels.assign': async (scope, { chatJid, labelIds, add }) =>
      networkOperation(bareReason, () => scope.session().labels.assign(chatJid, labelIds, add)),
    'labels.create': async (scope, { name, color }) =>
      networkOperation('Failed to create the label', () => scope.session().labels.create(name, color)),
    'labels.delete': async (scope, { labelId }) => {
      await networkOperation(bareReason, () => scope.session().labels.remove(labelId));
      return { deleted: true };
    },
  };
}
