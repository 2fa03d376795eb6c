import { createHash } from 'node:crypto';
import { PROFILE_NAMESPACE } from '../store/namespaces.js';
import type { ActorScope } from './actor-scope.js';
import type { CallHandlers } from './instance-actor.js';
import { networkOperation } from './network-operation.js';
import type { ProfileCallMap, ProfileField } from './profile-calls.js';

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

/**
 * The profile calls on the owner node. The values last applied (picture digest, About text) are kept in
 * owned state so that `updatedFields` lists only what changed; the push name is the instance's cached one.
 */
export function profileHandlers(): Pick<CallHandlers<ActorScope>, keyof ProfileCallMap> {
  return {
    'profile.update': async (scope, { picture, name, status }) => {
      const { ctx } = scope;
      const profile = scope.session().profile;
      const known = await ctx.store.ownedState.list(ctx.instanceId, PROFILE_NAMESPACE);
      const updatedFields: ProfileField[] = [];
      if (picture !== undefined) {
        const bytes = picture === null ? null : Buffer.from(picture, 'base64');
        const digest = bytes ? sha256(bytes) : 'none';
        await networkOperation('failed to set profile picture', () => profile.update({ picture: bytes }));
        if (known.get('picture') !== digest) updatedFields.push('profilePicture');
        await ctx.writeOwned([{ namespace: PROFILE_NAMESPACE, key: 'picture', value: digest }]);
      }
      if (name !== undefined) {
        await networkOperation('failed to set profile name', () => profile.update({ name }));
        if (scope.instance().connection.profileName !== name) {
          updatedFields.push('profileName');
          await scope.setProfileName(name);
        }
      }
      if (status !== undefined) {
        await networkOperation('failed to set profile status', () => profile.update({ status }));
        if (known.get('status') !== status) updatedFields.push('profileStatus');
        await ctx.writeOwned([{ namespace: PROFILE_NAMESPACE, key: 'status', value: status }]);
      }
      return { updatedFields };
    },
    'msgnet.profile': async (scope, { jid }) =>
      networkOperation('Failed to read the profile', () => scope.session().profile.get(jid)),
    'msgnet.lookup': async (scope, { number }) =>
      networkOperation('Failed to look the number up', () => scope.session().profile.lookup(number)),
  };
}
