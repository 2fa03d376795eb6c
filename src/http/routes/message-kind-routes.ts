import { randomUUID } from 'node:crypto';
import type { z } from 'zod';
import type { WireContent } from '../../actors/message-calls.js';
import type { WireMedia } from '../../actors/wire-media.js';
import { NotFoundError, ValidationError } from '../../errors.js';
import { loadMediaSource } from '../../media/media-source.js';
import { prepareMedia, prepareSticker } from '../../media/outgoing-media.js';
import type { MessageRef } from '../../msgnet/msgnet-driver.js';
import { pixKeyProblem } from '../../msgnet/pix-key.js';
import type { PIX_KEY_TYPES } from '../../msgnet/pix-key.js';
import type { MessageRecord } from '../../store/records.js';
import { ApiRouter } from '../api-router.js';
import type { ObjectSchema, RouteContext } from '../api-router.js';
import { requireInstance } from '../auth.js';
import { idempotency } from '../idempotency.js';
import { assertConnected, disconnectedWhenNotConnected, nameRequired, toRecipient } from '../route-helpers.js';
import type { ActorRouteDeps } from '../route-deps.js';
import { bodies, count, invalid, isOneEmoji, toButtons, unique } from './message-kind-bodies.js';
import {
  checkCommon,
  either,
  mediaFields,
  quoted,
  replyRecipient,
  sendCommon,
  sentAnswer,
  sentBody,
  waitFirst,
} from './message-send.js';

type Deps = ActorRouteDeps;

/** WhatsApp lets a sender edit a message for 15 minutes. */
export const EDIT_WINDOW_MS = 15 * 60_000;

/** New kinds of message: sticker, contact, pix, buttons, list, carousel, poll, event, reaction, edit, forward. */
export function messageKindRoutes(deps: Deps) {
  const api = new ApiRouter({ prefix: '/api/message', tag: 'Messages', maxBodyBytes: deps.maxBodyBytes });
  const idempotent = idempotency();
  const guard = requireInstance(deps.store, deps.auth);
  const { actors, store } = deps;
  const kinds = ['sticker', 'contact', 'pix', 'form', 'button', 'buttons', 'list', 'carousel', 'poll', 'event'];
  for (const kind of [...kinds, 'reaction', 'edit', 'forward']) nameRequired(api, 'post', `/${kind}`, deps.auth);

  /** A media header (URL or data: URI), fetched through the address policy and checked for its kind. */
  const loadMedia = async (source: string, kind: 'image' | 'video' | 'document', field: string): Promise<WireMedia> => {
    const loaded = await loadMediaSource(source, field, deps.media);
    const media = await prepareMedia(kind, loaded.bytes, {
      opusAudio: false,
      maxBytes: deps.media.maxBytes,
      ...(kind === 'document' && loaded.declaredMime ? { declaredMime: loaded.declaredMime } : {}),
      ...(kind === 'document' && loaded.fileName ? { fileName: loaded.fileName } : {}),
    });
    return {
      kind,
      base64: media.data.toString('base64'),
      mimetype: media.mimetype,
      ...(media.fileName ? { fileName: media.fileName } : {}),
    };
  };

  /** Sends one kind: waits out the delay, then one actor call; answers like the text send. */
  const send = async (
    ctx: RouteContext,
    b: {
      number?: string | undefined;
      delay?: number | undefined;
      delayMs?: number | undefined;
      source?: string;
      replyPrivate?: boolean | undefined;
    },
    common: { to: string; delay: number; replyTo?: string | undefined },
    content: WireContent,
    messageType: string,
    shown: string,
    extra: Record<string, unknown> = {},
  ) => {
    const instanceId = ctx.state.instance!.id;
    const reply = await quoted(store, instanceId, common.replyTo);
    const to = replyRecipient(common.to, reply, b.replyPrivate);
    await waitFirst(actors.for(ctx), instanceId, to, common.delay);
    const sent = await actors.for(ctx).call(instanceId, 'msgnet.send', { ...sendCommon(to, b, reply), content });
    ctx.body = sentBody(
      sent,
      messageType,
      shown,
      to,
      { ...(reply ? { replyTo: reply.id } : {}), ...extra },
      b.source,
      ctx.state.instance,
    );
  };

  const post = <S extends ObjectSchema>(
    path: string,
    summary: string,
    body: S,
    handler: (ctx: RouteContext, b: z.infer<S>) => Promise<void>,
  ) =>
    api.route(
      { method: 'post', path, idempotency: idempotent, summary, auth: guard, body, responses: sentAnswer },
      async (ctx, { body: b }) => handler(ctx, b as z.infer<S>),
    );

  post('/sticker/:instance', 'Send a sticker (any image, made a 512×512 WebP)', bodies.sticker, async (ctx, b) => {
    const common = checkCommon(b);
    if (!b.imageUrl) throw new ValidationError('imageUrl is required');
    assertConnected(ctx.state.instance!);
    const loaded = await loadMediaSource(b.imageUrl, 'imageUrl', deps.media);
    const sticker = await prepareSticker(loaded.bytes);
    const instanceId = ctx.state.instance!.id;
    const reply = await quoted(store, instanceId, b.replyTo);
    const to = replyRecipient(common.to, reply, b.replyPrivate);
    await waitFirst(actors.for(ctx), instanceId, to, common.delay);
    const sent = await actors.for(ctx).call(instanceId, 'msgnet.sendMedia', {
      ...sendCommon(to, b, reply),
      media: { kind: 'sticker', base64: sticker.data.toString('base64'), mimetype: sticker.mimetype },
    });
    ctx.body = sentBody(
      sent,
      'sticker',
      '',
      to,
      {
        ...(reply ? { replyTo: reply.id } : {}),
        media: { mimetype: sticker.mimetype, size: sticker.data.length },
        ...mediaFields({ mimetype: sticker.mimetype, size: sticker.data.length }),
      },
      b.source,
      ctx.state.instance,
    );
  });

  post('/contact/:instance', 'Send contact cards', bodies.contact, async (ctx, b) => {
    const common = { ...checkCommon(b), replyTo: b.replyTo };
    const cards = count(b.vcard === undefined ? undefined : [b.vcard].flat(), 1, 10, 'vcard');
    const contacts = cards.map((c) => ({ ...c, phone: c.phone.replace(/^\+/, '') }));
    const names = contacts.map((c) => c.fullName).join(', ');
    await send(ctx, b, common, { kind: 'contacts', contacts }, 'contact', names, { contacts, vcard: cards });
    // The hosted product's message for several cards (one ContactsArrayMessage); one card keeps ours.
    if (cards.length > 1) {
      (ctx.body as { message: string }).message = `${cards.length} contacts sent successfully in one message`;
    }
  });

  post('/pix/:instance', 'Send a PIX payment card (Brazil)', bodies.pix, async (ctx, b) => {
    const common = { ...checkCommon(b), replyTo: b.replyTo };
    if (!b.merchantName || !b.pixKey || !b.pixKeyType) {
      throw new ValidationError('merchantName, pixKey and pixKeyType are required');
    }
    const keyType = b.pixKeyType as (typeof PIX_KEY_TYPES)[number];
    const problem = pixKeyProblem(keyType, b.pixKey);
    if (problem) throw invalid(`pixKey: ${problem}`);
    const payment = {
      merchantName: b.merchantName,
      key: b.pixKey,
      keyType,
      ...(b.message ? { message: b.message } : {}),
      ...(b.items?.length ? { items: b.items } : {}),
    };
    await send(ctx, b, common, { kind: 'pix', payment }, 'pix', b.message ?? b.merchantName, { payment });
  });

  post('/form/:instance', 'Send a native-flow form (WhatsApp Flows; phone apps only)', bodies.form, async (ctx, b) => {
    const common = { ...checkCommon(b), replyTo: b.replyTo };
    if (!b.message) throw new ValidationError('Message is required');
    const form = {
      text: b.message,
      ...(b.footerText ? { footer: b.footerText } : {}),
      params: formParams(b),
      messageVersion: b.messageVersion ?? 1,
    };
    const formType = b.buttonParamsJSON !== undefined ? 'custom' : (b.formType ?? 'contact_details');
    await send(ctx, b, common, { kind: 'form', form }, 'form', b.message, { form: { formType } });
  });

  const buttonsHandler = async (ctx: RouteContext, b: z.infer<typeof bodies.button>) => {
    const common = { ...checkCommon(b), replyTo: b.replyTo };
    // IMAGE, VIDEO or DOCUMENT as the hosted product writes them, or in lower case.
    const headerKind = (b.mediaType ?? 'image').toLowerCase();
    if (headerKind !== 'image' && headerKind !== 'video' && headerKind !== 'document') {
      throw invalid('mediaType must be IMAGE, VIDEO or DOCUMENT');
    }
    // The header is fetched first: a refused address is the answer whatever else the body holds.
    const media = b.mediaUrl ? await loadMedia(b.mediaUrl, headerKind, 'mediaUrl') : undefined;
    if (b.mediaType && !b.mediaUrl) throw invalid('mediaType needs mediaUrl');
    if (!b.contentText) throw new ValidationError('contentText is required');
    const buttons = toButtons(count(b.buttons, 1, 3, 'buttons'), 'buttons');
    const content: WireContent = {
      kind: 'buttons',
      text: b.contentText,
      buttons,
      ...(b.headerText ? { header: b.headerText } : {}),
      ...(b.footerText ? { footer: b.footerText } : {}),
      ...(media ? { media } : {}),
    };
    await send(ctx, b, common, content, 'buttons', b.contentText, { buttons });
  };
  post('/button/:instance', 'Send a message with up to 3 buttons', bodies.button, buttonsHandler);
  post('/buttons/:instance', "Send buttons ('button' under the plural name)", bodies.button, buttonsHandler);

  post('/list/:instance', 'Send a list of choices', bodies.list, async (ctx, b) => {
    const common = { ...checkCommon(b), replyTo: b.replyTo };
    if (!b.contentText) throw new ValidationError('contentText is required');
    if (!b.buttonText) throw new ValidationError('buttonText is required');
    const sections = count(b.sections, 1, 10, 'sections');
    sections.forEach((s, i) => count(s.rows, 1, 10, `sections[${i}].rows`));
    unique(
      sections.flatMap((s) => s.rows.map((r) => r.id)),
      'row ids',
    );
    const content: WireContent = {
      kind: 'list',
      text: b.contentText,
      buttonText: b.buttonText,
      sections,
      ...(b.headerText ? { header: b.headerText } : {}),
      ...(b.footerText ? { footer: b.footerText } : {}),
    };
    await send(ctx, b, common, content, 'list', b.contentText, { sections });
  });

  post('/carousel/:instance', 'Send a carousel of cards', bodies.carousel, async (ctx, b) => {
    const common = { ...checkCommon(b), replyTo: b.replyTo };
    const cards = count(b.cards, 1, 10, 'cards');
    const built = [];
    for (const [i, card] of cards.entries()) {
      const { imageUrl, videoUrl } = card.header;
      if (imageUrl && videoUrl) throw invalid(`cards[${i}].header: send imageUrl or videoUrl, not both`);
      const buttons = toButtons(count(card.buttons ?? [], 0, 3, `cards[${i}].buttons`), `cards[${i}].buttons`);
      const media = imageUrl
        ? await loadMedia(imageUrl, 'image', `cards[${i}].header.imageUrl`)
        : videoUrl
          ? await loadMedia(videoUrl, 'video', `cards[${i}].header.videoUrl`)
          : undefined;
      built.push({
        title: card.header.title,
        ...(card.header.subtitle ? { subtitle: card.header.subtitle } : {}),
        ...(media ? { media } : {}),
        body: card.body.text,
        ...(card.footer ? { footer: card.footer } : {}),
        buttons,
      });
    }
    const content: WireContent = {
      kind: 'carousel',
      cards: built,
      ...(b.message ? { text: b.message } : {}),
      ...(b.footer ? { footer: b.footer } : {}),
    };
    // The hosted product's answer: an interactive message, its content the text and the number of cards.
    const shown = `${b.message ? `${b.message} - ` : ''}Carousel with ${built.length} card(s)`;
    await send(ctx, b, common, content, 'interactive', shown, { cards: built.length });
  });

  post('/poll/:instance', 'Send a poll', bodies.poll, async (ctx, b) => {
    const common = { ...checkCommon(b), replyTo: b.replyTo };
    const question = either(b.question, b.name, ['question', 'name']);
    if (!question) throw new ValidationError('question is required');
    const options = count(either(b.options, b.values, ['options', 'values']), 2, 12, 'options');
    unique(options, 'options');
    // As the hosted product does: below 1 counts as 1, above the number of options as that number.
    const asked = either(b.maxAnswer, b.selectableCount, ['maxAnswer', 'selectableCount']) ?? 1;
    const maxAnswer = Math.min(Math.max(asked, 1), options.length);
    await send(ctx, b, common, { kind: 'poll', question, options, maxAnswer }, 'poll', question, {
      poll: { question, options, maxAnswer },
    });
  });

  post('/event/:instance', 'Send an event invitation', bodies.event, async (ctx, b) => {
    const common = { ...checkCommon(b), replyTo: b.replyTo };
    if (!b.name) throw new ValidationError('name is required');
    if (!b.startAt) throw new ValidationError('startAt is required');
    const startAt = Date.parse(b.startAt);
    const endAt = b.endAt ? Date.parse(b.endAt) : undefined;
    if (endAt !== undefined && endAt <= startAt) throw invalid('endAt must be after startAt');
    const event = {
      name: b.name,
      startAt,
      ...(endAt !== undefined ? { endAt } : {}),
      ...(b.description ? { description: b.description } : {}),
      ...(b.location ? { location: b.location } : {}),
      ...(b.joinLink ? { joinLink: b.joinLink } : {}),
    };
    await send(ctx, b, common, { kind: 'event', event }, 'event', b.name, {
      event: {
        ...event,
        startAt: new Date(startAt).toISOString(),
        endAt: endAt ? new Date(endAt).toISOString() : null,
      },
    });
  });

  /** The history's message a reaction, an edit or a forward acts on; `number`, when given, must be its chat. */
  const target = async (ctx: RouteContext, messageId: string, number: string | undefined) => {
    const found = await store.messages.find(ctx.state.instance!.id, messageId);
    const chat = number !== undefined ? toRecipient(number) : undefined;
    if (found && chat && found.chatJid !== chat) throw invalid('messageId is a message of another chat');
    return { found, chat: found?.chatJid ?? chat };
  };

  post('/reaction/:instance', 'React to a message with an emoji', bodies.reaction, async (ctx, b) => {
    if (!b.messageId) throw new ValidationError('messageId is required');
    if (b.reaction === undefined) throw new ValidationError('reaction is required');
    // The hosted product clears a reaction with the word `remove`; ours with an empty string.
    const emoji = b.reaction.trim().toLowerCase() === 'remove' ? '' : b.reaction;
    if (!isOneEmoji(emoji)) throw invalid("reaction is one emoji (or 'remove', or empty, to remove it)");
    const { found, chat } = await target(ctx, b.messageId, b.number);
    if (!chat) throw new ValidationError('Number is required');
    const fromMe = found?.fromMe ?? b.fromMe ?? false;
    const participant =
      found && !found.fromMe ? found.senderJid : b.participant && toRecipient(b.participant, 'participant');
    if (chat.endsWith('@g.us') && !fromMe && !participant) {
      throw invalid('participant is required to react in a group to a message that is not ours');
    }
    const ref: MessageRef = {
      id: b.messageId,
      chatJid: chat,
      fromMe,
      ...(participant && chat.endsWith('@g.us') ? { participant } : {}),
    };
    const common = { ...checkCommon({ ...b, number: chat }) };
    await send(ctx, b, common, { kind: 'reaction', target: ref, emoji }, 'reaction', emoji, {
      reaction: { messageId: b.messageId, emoji },
      replyTo: { messageId: b.messageId },
    });
    (ctx.body as { message: string }).message = emoji ? 'Reaction sent successfully' : 'Reaction removed successfully';
  });

  const editMessage = async (ctx: RouteContext, b: z.infer<typeof bodies.edit>) => {
    if (!b.messageId) throw new ValidationError('messageId is required');
    const next = either(b.message, b.text, ['message', 'text']);
    if (!next) throw new ValidationError('Message is required');
    const { found } = await target(ctx, b.messageId, b.number);
    if (!found) throw new NotFoundError('Message not found in the chat history');
    editable(found);
    const common = checkCommon({ ...b, number: found.chatJid });
    const ref: MessageRef = { id: found.id, chatJid: found.chatJid, fromMe: true };
    await send(ctx, b, common, { kind: 'edit', target: ref, text: next }, 'edit', next, {
      edit: { messageId: found.id },
    });
    return found;
  };
  post('/edit/:instance', 'Edit a text message of ours', bodies.edit, async (ctx, b) => {
    await editMessage(ctx, b);
  });

  const forwardMessage = async (ctx: RouteContext, b: z.infer<typeof bodies.forward>) => {
    if (!b.messageId) throw new ValidationError('messageId is required');
    const to = either(b.to, b.number, ['to', 'number']);
    if (!to) throw new ValidationError('to is required');
    const common = checkCommon({ ...b, number: to });
    const found = await store.messages.find(ctx.state.instance!.id, b.messageId);
    if (!found) throw new NotFoundError('Message not found in the chat history');
    const instanceId = ctx.state.instance!.id;
    let content: WireContent;
    if (found.media) {
      assertConnected(ctx.state.instance!);
      // The file again from the session that received it (the history keeps no bytes).
      const file = await actors.for(ctx).call(instanceId, 'media.download', { messageId: found.id });
      content = {
        kind: 'forward',
        text: found.text,
        media: {
          kind: found.media.kind as WireMedia['kind'],
          base64: file.base64,
          mimetype: file.mimetype,
          ...(file.fileName ? { fileName: file.fileName } : {}),
          ...(found.text && found.media.kind !== 'audio' && found.media.kind !== 'sticker'
            ? { caption: found.text }
            : {}),
        },
      };
    } else if (found.type === 'text') {
      content = { kind: 'forward', text: found.text };
    } else {
      throw invalid(`only text and media messages can be forwarded, not ${found.type}`);
    }
    await send(ctx, b, common, content, 'forward', found.text, { forwardedFrom: found.id });
  };
  post('/forward/:instance', 'Forward a message of the history to another chat', bodies.forward, forwardMessage);

  // The hosted product's paths of edit and forward, under /api/chat, with its fields and answers.
  const chatApi = new ApiRouter({ prefix: '/api/chat', tag: 'Chats', maxBodyBytes: deps.maxBodyBytes });
  for (const op of ['edit', 'forward']) nameRequired(chatApi, 'post', `/${op}`, deps.auth);
  /** The hosted product's 404 of both, whatever was not found. */
  const hostedNotFound = async (work: () => Promise<void>) => {
    try {
      await work();
    } catch (err) {
      if (err instanceof NotFoundError) throw new NotFoundError('Instance not found or message not found');
      throw err;
    }
  };
  chatApi.route(
    {
      method: 'post',
      path: '/forward/:instance',
      idempotency: idempotent,
      summary: "Forward a message of the history (the hosted product's path)",
      auth: guard,
      body: bodies.forward,
      responses: {
        200: '`{messageId (the new one), originalId, destinationJid, data}`',
        400: 'messageId is required or to is required',
        404: 'Instance not found or message not found',
      },
    },
    async (ctx, { body: b }) => {
      if (!b.messageId || !(b.to ?? b.number)) throw new ValidationError('messageId is required or to is required');
      await hostedNotFound(() => disconnectedWhenNotConnected(() => forwardMessage(ctx, b)));
      const { data } = ctx.body as ReturnType<typeof sentBody>;
      ctx.body = {
        success: true,
        message: 'Message forwarded successfully',
        messageId: data.messageId,
        originalId: b.messageId,
        destinationJid: data.to,
        data,
      };
    },
  );
  chatApi.route(
    {
      method: 'post',
      path: '/edit/:instance',
      idempotency: idempotent,
      summary: "Edit a text message of ours (the hosted product's path: content)",
      auth: guard,
      body: bodies.hostedEdit,
      responses: {
        200: '`{messageId, chatJid, oldContent, newContent}`',
        400: 'messageId is required, content is required',
        404: 'Instance not found or message not found',
      },
    },
    async (ctx, { body: b }) => {
      if (!b.messageId) throw new ValidationError('messageId is required');
      if (!b.content) throw new ValidationError('content is required');
      const { content, ...rest } = b;
      let found: MessageRecord | undefined;
      await hostedNotFound(async () => {
        found = await disconnectedWhenNotConnected(() => editMessage(ctx, { ...rest, message: content }));
      });
      ctx.body = {
        success: true,
        message: 'Message edited successfully',
        messageId: found!.id,
        chatJid: found!.chatJid,
        oldContent: found!.text,
        newContent: content,
      };
    },
  );

  return [api, chatApi];
}

/** Only our own text messages, and only within the network's edit window. */
function editable(m: MessageRecord): void {
  if (!m.fromMe) throw invalid('only messages sent by this instance can be edited');
  if (m.type !== 'text') throw invalid('only text messages can be edited');
  if (Date.now() - m.timestamp > EDIT_WINDOW_MS) {
    throw invalid('the message is older than 15 minutes, past the edit window of WhatsApp');
  }
}

/**
 * The `galaxy_message` button's parameters: the custom ones given as `buttonParamsJSON`, or those of the
 * form type, its visible fields (or the offer) passed to the flow's first screen.
 */
function formParams(b: z.infer<typeof bodies.form>): Record<string, unknown> {
  if (b.buttonParamsJSON !== undefined) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(b.buttonParamsJSON);
    } catch {
      parsed = undefined;
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
      throw invalid('buttonParamsJSON must be a JSON object');
    }
    return parsed as Record<string, unknown>;
  }
  const formType = b.formType ?? 'contact_details';
  const data =
    formType === 'registration_offer'
      ? { offer_name: b.offerName ?? '', offer_description: b.offerDescription ?? '' }
      : {
          full_name_visible: b.fullNameVisible ?? true,
          phone_number_visible: b.phoneNumberVisible ?? true,
          email_visible: b.emailVisible ?? false,
          cpf_or_cnpj_visible: b.cpfOrCnpjVisible ?? false,
          delivery_address_visible: b.deliveryAddressVisible ?? false,
        };
  return {
    flow_message_version: b.flowMessageVersion ?? '3',
    flow_token: b.flowToken ?? randomUUID(),
    ...(b.flowId ? { flow_id: b.flowId } : {}),
    flow_cta: b.buttonLabel ?? (formType === 'registration_offer' ? 'Sign up' : 'Fill in'),
    flow_action: 'navigate',
    flow_action_payload: { screen: formType.toUpperCase(), data },
    mode: 'published',
  };
}
