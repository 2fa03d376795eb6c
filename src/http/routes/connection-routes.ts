import QRCode from 'qrcode';
import { z } from 'zod';
import { ValidationError } from '../../errors.js';
import { hostedStatus } from '../../instances/instance-summary.js';
import { ApiRouter, queryParam } from '../api-router.js';
import { requireInstance } from '../auth.js';
import type { ActorRouteDeps } from '../route-deps.js';

type Deps = ActorRouteDeps;

const connectQuery = z.object({
  number: queryParam
    .text('Phone number with country code: link with a pairing code instead of a QR code')
    .refine((v) => v === undefined || /^\+?\d{8,15}$/.test(v), 'number must be 8 to 15 digits with country code'),
  history: queryParam
    .text('Days of history to ask the phone for on the first link (a whole number, 0 or more; 0: none)')
    .refine((v) => v === undefined || /^\d{1,5}$/.test(v), 'history must be a whole number of days, 0 or more'),
});

/** Connection lifecycle of an instance: connect (QR or pairing code), logout, reconnect. */
export function connectionRoutes(deps: Deps) {
  const api = new ApiRouter({ prefix: '/api/instance', tag: 'Instances' });
  const guard = requireInstance(deps.store, deps.auth);
  const { actors } = deps;

  api.route(
    {
      method: 'get',
      path: '/connect/:instance',
      summary: 'Connect: a QR code to scan, or a pairing code with ?number=; ?history= days of history to sync',
      auth: guard,
      query: connectQuery,
      responses: {
        200: '`{status: "qr", qrCode, qrCodeBase64}`, `{status: "pairing", pairingCode}` or `{status: "connected", numberJid}`',
        502: '`could not reach WhatsApp: <cause>` (DNS, refused, proxy down); the session keeps retrying',
      },
    },
    async (ctx, { query }) => {
      const challenge = await actors.for(ctx).call(ctx.state.instance!.id, 'msgnet.connect', {
        ...(query.number
          ? { method: 'pairing' as const, phoneNumber: query.number.replace(/\D/g, '') }
          : { method: 'qr' as const }),
        ...(query.history !== undefined ? { historyDays: Number(query.history) } : {}),
      });
      if (challenge.status === 'connected') {
        ctx.body = {
          success: true,
          message: 'Instance is already connected',
          status: 'connected',
          numberJid: challenge.numberJid,
        };
      } else if (challenge.status === 'pairing') {
        ctx.body = {
          success: true,
          message: 'Enter the pairing code on the phone',
          status: 'pairing',
          pairingCode: challenge.pairingCode,
        };
      } else {
        ctx.body = {
          success: true,
          message: 'QR code generated',
          status: 'qr',
          qrCode: challenge.qrCode,
          qrCodeBase64: await QRCode.toDataURL(challenge.qrCode, { errorCorrectionLevel: 'L', margin: 1, width: 264 }),
        };
      }
    },
  );

  // DELETE as well: what clients of the hosted product send.
  for (const method of ['post', 'delete'] as const) {
    api.route(
      {
        method,
        path: '/logout/:instance',
        summary: 'Unlink the device',
        auth: guard,
        responses: { 200: 'Instance logged out: `{instance: {name, state, status}}`' },
      },
      async (ctx) => {
        const { state } = await actors.for(ctx).call(ctx.state.instance!.id, 'msgnet.logout', {});
        ctx.body = {
          success: true,
          message: 'Instance logged out',
          instance: { name: ctx.state.instance!.name, state, status: hostedStatus(state) },
        };
      },
    );
  }

  api.route(
    {
      method: 'post',
      path: '/reconnect/:instance',
      summary: 'Drop and reopen the connection',
      auth: guard,
      responses: {
        200: 'Reconnect initiated: `{status, instance: {name, state}}` (`status`: connecting, or connected once it is)',
        400: 'Instance has no saved session — call /connect first',
      },
    },
    async (ctx) => {
      // A session to resume is a linked number the store knows (written by the owner); else connect first.
      if (!ctx.state.instance!.connection.numberJid) {
        throw new ValidationError('Instance has no saved session — call /connect first');
      }
      const { state } = await actors.for(ctx).call(ctx.state.instance!.id, 'msgnet.reconnect', {});
      ctx.body = {
        success: true,
        message: 'Reconnect initiated',
        status: state === 'connected' ? 'connected' : 'connecting',
        instance: { name: ctx.state.instance!.name, state },
      };
    },
  );

  return api;
}
