import type {
  GroupDetails,
  GroupInfo,
  JoinRequest,
  ParticipantAction,
  ParticipantResult,
} from '../msgnet/ops/group-ops.js';

/** A change of `POST /api/group/update`: pictures as the converted JPEG in base64, null to remove it. */
export interface GroupUpdatePayload {
  groupJid: string;
  subject?: string;
  description?: string;
  picture?: string | null;
  announce?: boolean;
  locked?: boolean;
  memberAdd?: boolean;
  joinApproval?: boolean;
}

/** The group operations an instance actor answers (group-handlers.ts); payloads and results are plain JSON. */
export interface GroupCallMap {
  'groups.list': { payload: { includeMembers: boolean }; result: GroupInfo[] };
  /** Creates the group, then sets its picture when given; `pictureError` says why that second step failed. */
  'groups.create': {
    payload: { subject: string; participants: string[]; description?: string; picture?: string };
    result: { group: GroupDetails; pictureError?: string };
  };
  'groups.info': { payload: { groupJid: string }; result: GroupDetails };
  /** Applies the fields given, in order, then reads the group again. */
  'groups.update': { payload: GroupUpdatePayload; result: GroupDetails };
  'groups.participants': {
    payload: { groupJid: string; action: ParticipantAction; participants: string[] };
    result: ParticipantResult[];
  };
  'groups.inviteCode': { payload: { groupJid: string }; result: { inviteCode: string } };
  /** Revokes the invite link; answers the new code. */
  'groups.resetInvite': { payload: { groupJid: string }; result: { inviteCode: string } };
  'groups.join': { payload: { inviteCode: string }; result: { groupJid: string } };
  'groups.leave': { payload: { groupJid: string }; result: { left: true } };
  'groups.requests': { payload: { groupJid: string }; result: JoinRequest[] };
  'groups.answerRequests': {
    payload: { groupJid: string; participants: string[]; approve: boolean };
    result: ParticipantResult[];
  };
}

declare module './actor-calls.js' {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- the merge adds the calls above
  interface ActorCallMap extends GroupCallMap {}
}
