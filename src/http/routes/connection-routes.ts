import Router from '@koa/router';
import QRCode from 'qrcode';
import { ValidationError } from '../../errors.js';
import type { AppState } from '../app-state.js';
import { requireInstance } from '../auth.js';
import type { ActorRouteDeps } from '../route-deps.js';

type Deps = ActorRouteDeps;

/** Connection lifecycle of an instance: connect (QR or pairing code), logout, reconnect. */
export function connectionRoutes(deps: Deps) {
  const router = new Router<AppState>({ prefix: '/api/instance' });
  const guard = requireInstance(deps.store, deps.auth);
  const call = deps.runtime.router;

  router.get('/connect/:instance', guard, async (ctx) => {
    const raw = typeof ctx.query.number === 'string' ? ctx.query.number.trim() : '';
    if (raw && !/^\+?\d{8,15}$/.test(raw)) throw new ValidationError('number must be 8 to 15 digits with country code');
    const challenge = await call.call(
      ctx.state.instance!.id,
      'msgnet.connect',
      raw ? { method: 'pairing', phoneNumber: raw.replace(/\D/g, '') } : { method: 'qr' },
      deps.callTimeoutMs,
    );
    if (challenge.status === 'connected') {
      ctx.body = { success: true, message: 'Instance is already connected', status: 'connected', numberJid: challenge.numberJid };
    } else if (challenge.status === 'pairing') {
      ctx.body = { success: true, message: 'Enter the pairing code on the phone', status: 'pairing', pairingCode: challenge.pairingCode };
    } else {
      ctx.body = {
        success: true,
        message: 'Scan the QR code with WhatsApp',
        status: 'qr',
        qrCode: challenge.qrCode,
        qrCodeBase64: await QRCode.toDataURL(challenge.qrCode, { errorCorrectionLevel: 'L', margin: 1, width: 264 }),
      };
    }
  });

  router.post('/logout/:instance', guard, async (ctx) => {
    const { state } = await call.call(ctx.state.instance!.id, 'msgnet.logout', {}, deps.callTimeoutMs);
    ctx.body = { success: true, message: 'Instance logged out', instance: { name: ctx.state.instance!.name, state } };
  });

  router.post('/reconnect/:instance', guard, async (ctx) => {
    const { state } = await call.call(ctx.state.instance!.id, 'msgnet.reconnect', {}, deps.callTimeoutMs);
    ctx.body = { success: true, message: 'Instance reconnected', instance: { name: ctx.state.instance!.name, state } };
  });

  return router;
}
