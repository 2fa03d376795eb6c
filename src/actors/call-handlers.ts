import type { ActorScope } from './actor-scope.js';
import type { CallCallMap } from './call-calls.js';
import type { CallHandlers } from './instance-actor.js';
import { bareReason, networkOperation } from './network-operation.js';

/** Ring-and-drop calls and scheduled-call cards on the owner node; a refusal is the bare reason (spec 7). */
export function callHandlers(): Pick<CallHandlers<ActorScope>, keyof CallCallMap> {
  return {
    'call.offer': async (scope, { to, seconds }) =>
      networkOperation(bareReason, () => scope.session().calls.offer(to, seconds)),
    'call.audio': async (scope, { to, audio, mimetype, seconds }) =>
      networkOperation(bareReason, () =>
        scope.session().calls.audioCall(to, { data: Buffer.from(audio, 'base64'), mimetype, seconds }),
      ),
    'call.schedule': async (scope, { to, card }) => {
      const session = scope.session();
      const link = await networkOperation(bareReason, () =>
        session.calls.createLink(card.video ? 'video' : 'audio', card.startTime),
      );
      const message = await networkOperation(bareReason, () =>
        session.messages.sendContent(to, { kind: 'scheduledCall', card: { ...card, joinLink: link.url } }),
      );
      return { messageId: message.messageId, token: link.token, url: link.url };
    },
  };
}
