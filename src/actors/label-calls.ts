import type { ChatLabels, LabelInfo } from '../msgnet/msgnet-driver.js';

/** The label calls (label-handlers.ts); reading works while disconnected, from the owner's label state. */
export interface LabelCallMap {
  'labels.chats': { payload: { refresh: boolean }; result: ChatLabels[] };
  'labels.list': { payload: Record<string, never>; result: LabelInfo[] };
  'labels.assign': { payload: { chatJid: string; labelIds: string[]; add: boolean }; result: ChatLabels };
  'labels.create': { payload: { name: string; color: number }; result: LabelInfo };
  'labels.delete': { payload: { labelId: string }; result: { deleted: true } };
}

declare module './actor-calls.js' {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- the merge adds the calls above
  interface ActorCallMap extends LabelCallMap {}
}
