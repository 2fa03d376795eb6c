import QRCode from 'qrcode';
import { z } from 'zod';
import { ApiRouter, queryParam } from '../api-router.js';
import { requireInstance } from '../auth.js';
import type { ActorRouteDeps } from '../route-deps.js';

type Deps = ActorRouteDeps;

const connectQuery = z.object({
  number: queryParam
    .text('Phone number with country code: link with a pairing code instead of a QR code')
    .refine((v) => v === undefined || /^\+?\d{8,15}$/.test(v), 'number must be 8 to 15 digits with country code'),
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
      summary: 'Connect: a QR code to scan, or a pairing code with ?number=',
      auth: guard,
      query: connectQuery,
      responses: {
        200: '`{status: "qr", qrCode, qrCodeBase64}`, `{status: "pairing", pairingCode}` or `{status: "connected", numberJid}`',
        502: '`could not reach WhatsApp: <cause>` (DNS, refused, proxy down); the session keeps retrying',
      },
    },
    async (ctx, { query }) => {
      const challenge = await actors
        .for(ctx)
        .call(
          ctx.state.instance!.id,
          'msgnet.connect',
          query.number ? { method: 'pairing', phoneNumber: query.number.replace(/\D/g, '') } : { method: 'qr' },
        );
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
          message: 'Scan the QR code with WhatsApp',
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
        responses: { 200: 'Instance logged out: `{instance: {name, state}}`' },
      },
      async (ctx) => {
        const { state } = await actors.for(ctx).call(ctx.state.instance!.id, 'msgnet.logout', {});
        ctx.body = {
          success: true,
          message: 'Instance logged out',
          instance: { name: ctx.state.instance!.name, state },
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
      responses: { 200: 'Instance reconnected: `{instance: {name, state}}`' },
    },
    async (ctx) => {
      const { state } = await actors.for(ctx).call(ctx.state.instance!.id, 'msgnet.reconnect', {});
      ctx.body = {
        success: true,
        message: 'Instance reconnected',
        instance: { name: ctx.state.instance!.name, state },
      };
    },
  );

  return api;
}
